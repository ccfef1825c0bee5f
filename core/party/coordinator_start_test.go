package party

import (
	"context"
	"path/filepath"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/daemon"
	"github.com/partyhq/party/core/launch"
	"github.com/partyhq/party/core/review"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/tmux"
)

// windowTmux is a session.Tmux that only opens windows, noting each;
// any other call panics (the embedded nil interface).
type windowTmux struct {
	session.Tmux
	windows []string
}

func (w *windowTmux) NewWindow(_ context.Context, session, name string, _ tmux.Spawn) (string, error) {
	w.windows = append(w.windows, session+" "+name)
	return "%9", nil
}

func TestStartCoordinator(t *testing.T) {
	deps := func(ft *windowTmux) session.Deps {
		return session.Deps{Tmux: ft, Clock: clock.Real{}, Exe: "/opt/party bin/party",
			Environ: []string{"PATH=/bin", "PARTY_X=1", "SECRET=s"}}
	}
	t.Run("runs the supervisor in the hidden window", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ft := &windowTmux{}
			d := deps(ft)
			dir := t.TempDir()
			// Nobody takes the coordinator's lock here: Start gives up
			// waiting for it after 5 s of the bubble's virtual time.
			require.NoError(t, startCoordinator(context.Background(), d, "team", dir, 4))

			assert.Equal(t, []string{"team " + daemon.CoordinatorWindow}, ft.windows)
			spec, err := launch.Read(filepath.Join(dir, "launch", daemon.CoordinatorWindow+".json"))
			require.NoError(t, err)
			assert.Equal(t, []string{d.Exe, "--session", "team", "coordinator", "keep"}, spec.Argv)
			assert.Equal(t, []string{"PARTY_SESSION=team", "PATH=/bin", "PARTY_X=1", "PARTY_STATE_DIR=" + dir}, spec.Env)
			s, err := review.Load(review.Dir(dir))
			require.NoError(t, err)
			assert.Equal(t, 4, s.MaxIterations, "the review state is initialized")
		})
	})

	t.Run("refuses while one runs", func(t *testing.T) {
		ft := &windowTmux{}
		dir := t.TempDir()
		require.NoError(t, state.MkdirPrivate(review.Dir(dir)))
		release, err := state.Hold(context.Background(), clock.Real{}, filepath.Join(review.Dir(dir), daemon.LockFile))
		require.NoError(t, err)
		defer release()
		err = startCoordinator(context.Background(), deps(ft), "team", dir, 3)
		assert.ErrorIs(t, err, review.ErrRunning)
		assert.Empty(t, ft.windows, "no second window")
	})
}
