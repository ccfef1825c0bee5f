package task

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/usage"
)

func TestUpdateChange(t *testing.T) {
	empty, done := "", Done
	tests := []struct {
		name string
		u    Update
		want Change
		err  error
	}{
		{"status", Update{Status: "done", Force: true}, Change{Status: &done, Force: true}, nil},
		{"an assignee given empty clears it", Update{AssigneeGiven: true}, Change{Assignee: &empty}, nil},
		{"a milestone given", Update{Milestone: "M2", MilestoneGiven: true}, Change{Milestone: strp("M2")}, nil},
		{"an assignee not given is no change", Update{Assignee: "codex"}, Change{}, usage.Err},
		{"nothing", Update{Force: true}, Change{}, usage.Err},
		{"a bad status", Update{Status: "finished"}, Change{}, ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.u.Change()
			if tt.err != nil {
				assert.ErrorIs(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func strp(s string) *string { return &s }
