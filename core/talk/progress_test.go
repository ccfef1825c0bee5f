package talk

import (
	"bytes"
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/partyhq/party/core/clock"
)

func TestProgress(t *testing.T) {
	tests := []struct {
		name  string
		tty   bool
		after time.Duration
		want  string
	}{
		{"a line every 5s", false, 11 * time.Second, "party: waiting for claude, codex… 5s\nparty: waiting for claude, codex… 10s\n"},
		{"a spinner on a terminal, cleared at the end", true, 250 * time.Millisecond,
			"\r\033[K⠋ Waiting for claude, codex… 0s\r\033[K⠙ Waiting for claude, codex… 0s\r\033[K"},
		{"nothing before the first tick", false, 4 * time.Second, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var out bytes.Buffer
				stop := Progress(context.Background(), clock.Real{}, &out, tt.tty, []string{"claude", "codex"})
				time.Sleep(tt.after) // virtual time in the bubble
				stop()
				assert.Equal(t, tt.want, out.String())
			})
		})
	}
}
