package relay

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSteps(t *testing.T) {
	st := Steps{Dir: filepath.Join(t.TempDir(), "relay")}
	_, err := st.Load(Latest)
	var none *NoTaskError
	require.ErrorAs(t, err, &none)
	assert.ErrorIs(t, err, ErrNoTask)
	assert.EqualError(t, err, "no aborted relay task to retry")

	old := Step{Task: Task{ID: "tk-old", Planner: "p", Executor: "e", PlanWait: time.Minute}, Round: 1, Role: "p", Kind: "plan", Want: []string{"tk-old-plan-1"}}
	newer := Step{Task: Task{ID: "tk-new"}, Round: 2, Role: "e", Kind: "result"}
	require.NoError(t, st.Save(old))
	require.NoError(t, st.Save(newer))
	past := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(st.Dir, "tk-old.json"), past, past))

	got, err := st.Load("tk-old")
	require.NoError(t, err)
	assert.Equal(t, old, got, "a step reads back as saved")
	got, err = st.Load(Latest)
	require.NoError(t, err)
	assert.Equal(t, "tk-new", got.Task.ID, "the latest saved")

	st.Remove("tk-new")
	got, err = st.Load(Latest)
	require.NoError(t, err)
	assert.Equal(t, "tk-old", got.Task.ID)

	_, err = st.Load("tk-gone")
	assert.ErrorIs(t, err, ErrNoTask)
	assert.EqualError(t, err, `no aborted task "tk-gone" in `+st.Dir)
	_, err = st.Load("../tk-old")
	assert.NoError(t, err, "an id is a file name in Dir, never a path")

	require.NoError(t, os.WriteFile(filepath.Join(st.Dir, "tk-bad.json"), []byte("{"), 0o600))
	_, err = st.Load("tk-bad")
	assert.ErrorContains(t, err, "task tk-bad")
}
