package party

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/task"
)

// pmEnv is an Env in dir with the process's environment and overrides.
func pmEnv(dir string, env map[string]string) (*Env, *bytes.Buffer) {
	stderr := &bytes.Buffer{}
	getenv := func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return os.Getenv(k)
	}
	return &Env{Getenv: getenv, Getwd: func() (string, error) { return dir, nil }, Clock: clock.Real{}, Stderr: stderr}, stderr
}

func TestPMActor(t *testing.T) {
	env := map[string]string{"PARTY_ROLE": ""}
	e, _ := pmEnv(t.TempDir(), env)
	actor := func(a string) string {
		got, err := PMActor(e, a)
		require.NoError(t, err)
		return got
	}
	assert.Equal(t, "human", actor(""))
	env["PARTY_ROLE"] = " codex "
	assert.Equal(t, "codex", actor(""), "the pane's role, trimmed")
	assert.Equal(t, "planner", actor("planner"), "--actor first")
	_, err := PMActor(e, "x\n**[party]** forged")
	assert.ErrorIs(t, err, task.ErrInvalid, "an actor is a role: no newline to forge a comment line with")
	env["PARTY_ROLE"] = "a b"
	_, err = PMActor(e, "")
	assert.ErrorIs(t, err, task.ErrInvalid, "a bad $PARTY_ROLE too")
}

// forcedStore is a store whose Update was forced over changes on GitHub.
type forcedStore struct {
	task.Store
	err error
}

func (s forcedStore) Update(_ context.Context, actor, id string, c task.Change) (task.Task, error) {
	return task.Task{ID: id, Assignee: actor, Forced: []task.FieldDiff{{Field: "status", Cached: "pending", Remote: "done"}}}, s.err
}

func TestUpdateWarnsOfWhatItForced(t *testing.T) {
	for _, failed := range []error{nil, errors.New("comment failed")} {
		e, stderr := pmEnv(t.TempDir(), nil)
		pm := &PM{Store: forcedStore{err: failed}, Actor: "planner", env: e}
		got, err := pm.Update(context.Background(), TaskUpdate{ID: "3", Status: "in_progress", Force: true})
		assert.Equal(t, failed, err)
		assert.Equal(t, "planner", got.Assignee, "the store got the actor")
		assert.Equal(t, `party: warning: task 3 had changed on GitHub since party last wrote it (status "pending" → "done"); --force applied this update over it`+"\n",
			stderr.String(), "also when the update failed after: %v", failed)
	}
}

func TestPMOnTheFileStore(t *testing.T) {
	ctx := context.Background()
	repo := t.TempDir()
	sub := filepath.Join(repo, "a", "b")
	require.NoError(t, os.MkdirAll(filepath.Join(repo, ".party"), 0o755))
	require.NoError(t, os.MkdirAll(sub, 0o755))
	env := map[string]string{"XDG_STATE_HOME": t.TempDir(), "PARTY_ROLE": "", "VISUAL": "true"}

	e, _ := pmEnv(repo, env)
	res, err := PMInit(ctx, e, PMInitOptions{Name: "crew"})
	require.NoError(t, err)
	assert.True(t, res.Created)
	_, err = PMInit(ctx, e, PMInitOptions{Actor: "bad actor"})
	assert.ErrorIs(t, err, task.ErrInvalid)

	require.NoError(t, os.WriteFile(filepath.Join(repo, ".party", "config.json"), []byte(`{"bogus": 1}`), 0o644))
	e, stderr := pmEnv(sub, env)
	pm, err := OpenPM(ctx, e, PMOptions{Actor: "planner"})
	require.NoError(t, err, "found from a subdirectory")
	assert.Contains(t, stderr.String(), filepath.Join(repo, ".party", "config.json")+`: unknown key "bogus"`,
		"the configuration is the linked directory's, not the subdirectory's")
	assert.Equal(t, "planner", pm.Actor)

	_, err = pm.Store.AddTask(ctx, pm.Actor, task.NewTask{Title: "lexer"})
	require.NoError(t, err)
	require.NoError(t, pm.Store.SetDoc(ctx, pm.Actor, "1", "# lexer\n"))
	stderr.Reset()
	require.NoError(t, pm.EditDoc(ctx, "1", task.Terminal{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}))
	assert.Empty(t, stderr.String(), "an editor that changed nothing saves nothing")
	doc, err := pm.Store.Doc(ctx, "1")
	require.NoError(t, err)
	assert.Equal(t, "# lexer\n", doc)
	env["VISUAL"] = "sed -i s/lexer/parser/"
	require.NoError(t, pm.EditDoc(ctx, "1", task.Terminal{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}))
	assert.Equal(t, "party: task 1: document saved\n", stderr.String())
	doc, err = pm.Store.Doc(ctx, "1")
	require.NoError(t, err)
	assert.Equal(t, "# parser\n", doc)
	events, err := pm.Store.Log(ctx, "1")
	require.NoError(t, err)
	require.NotEmpty(t, events)
	assert.Equal(t, "planner", events[len(events)-1].Actor)

	_, err = OpenPM(ctx, e, PMOptions{Actor: "x\ny"})
	assert.ErrorIs(t, err, task.ErrInvalid, "the actor is checked before the store opens")
	e, _ = pmEnv(t.TempDir(), env)
	_, err = OpenPM(ctx, e, PMOptions{})
	assert.ErrorIs(t, err, task.ErrNoTeam)
}

func TestJumpText(t *testing.T) {
	assert.Equal(t, "switched to crew", Jump{Session: "crew", Switched: true, Attach: "tmux attach-session -t =crew"}.Text())
	assert.Equal(t, "tmux attach-session -t =crew", Jump{Session: "crew", Attach: "tmux attach-session -t =crew"}.Text())
}
