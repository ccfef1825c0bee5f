package cli

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/party"
)

func TestDashFlags(t *testing.T) {
	tests := []struct {
		name        string
		args        []string
		want        DashOptions
		wantSession string
		wantJSON    bool
		wantErr     error
	}{
		{"live", []string{"dash"}, DashOptions{}, "", false, nil},
		{"once for one session", []string{"dash", "--session", "team", "--once"}, DashOptions{Once: true}, "team", false, nil},
		{"json", []string{"dash", "--json"}, DashOptions{}, "", true, nil},
		{"no arguments", []string{"dash", "team"}, DashOptions{}, "", false, party.ErrUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, _ := testFactory("")
			var got *DashOptions
			err := execute(f, tt.args, newDashCmd(f, func(_ context.Context, o *DashOptions) error { got = o; return nil }))
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
				assert.Nil(t, got, "nothing runs")
				return
			}
			require.NoError(t, err)
			require.NotNil(t, got)
			assert.Equal(t, tt.want, *got)
			assert.Equal(t, tt.wantSession, f.Session)
			assert.Equal(t, tt.wantJSON, f.JSON)
		})
	}
}
