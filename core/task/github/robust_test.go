package github_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/task"
	"github.com/partyhq/party/core/task/github"
	"github.com/partyhq/party/mockagents/fakegithub"
)

// The store when GitHub, gh, other writers or its own files fail it.

func TestGitHubUnavailable(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fakegithub.Options{Repos: []string{repo}})
	ctx := context.Background()
	_, err := f.store.AddTask(ctx, "planner", task.NewTask{Title: "a"})
	require.NoError(t, err)

	for _, tc := range []struct {
		name   string
		change func(*github.Config)
		want   error
		says   string
		// lookup: the store looks gh up (and finds none), whatever the
		// run's gh.
		lookup bool
	}{
		{"bad token", func(c *github.Config) { c.Env = ghEnv(f.srv, "GH_ENTERPRISE_TOKEN=wrong") }, task.ErrUnavailable, "credentials", false},
		{"no token", func(c *github.Config) {
			c.Env = slices.DeleteFunc(ghEnv(f.srv), func(kv string) bool { return strings.HasPrefix(kv, "GH_ENTERPRISE_TOKEN=") })
		}, task.ErrUnavailable, "credentials", false},
		{"gh missing from PATH", func(c *github.Config) { c.Env = ghEnv(f.srv, "PATH="+t.TempDir()) }, task.ErrUnavailable, "gh not found", true},
		{"gh missing by path", func(c *github.Config) { c.Gh = filepath.Join(t.TempDir(), "gh") }, task.ErrUnavailable, "not found", true},
		{"no such repository", func(c *github.Config) { c.Repo = "acme/nothing" }, task.ErrNotFound, "acme/nothing not found", false},
		{"not owner/name", func(c *github.Config) { c.Repo = "acme" }, task.ErrInvalid, "owner/name", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := f.cfg
			tc.change(&cfg)
			cfg.Runner = runner(t, cfg.Env)
			if tc.lookup {
				cfg.Runner = nil
			}
			_, err := github.New(ctx, cfg)
			require.ErrorIs(t, err, tc.want)
			assert.Contains(t, err.Error(), tc.says)
		})
	}

	// Offline: the server is gone; the store fails at once, and so does a
	// store opened before.
	require.NoError(t, f.srv.Stop())
	start := time.Now()
	_, err = github.New(ctx, f.cfg)
	require.ErrorIs(t, err, task.ErrUnavailable)
	assert.Contains(t, err.Error(), "cannot reach GitHub")
	_, err = f.store.Update(ctx, "codex", "1", task.Change{Status: ptr(task.Done)})
	require.ErrorIs(t, err, task.ErrUnavailable)
	_, err = f.store.Tasks(ctx, task.Filter{})
	require.ErrorIs(t, err, task.ErrUnavailable)
	assert.Less(t, time.Since(start), 20*time.Second, "no retrying, no queueing")
	var ge *github.Error
	require.ErrorAs(t, err, &ge)
	assert.Equal(t, 0, ge.HTTP)

	require.NoError(t, f.srv.Resume())
	_, err = f.store.Update(ctx, "codex", "1", task.Change{Status: ptr(task.Done)})
	require.NoError(t, err, "nothing was queued: the update is made now")
}

func TestGitHubConcurrentUpdatesLoseNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fakegithub.Options{})
	ctx := context.Background()
	const n = 6
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			// Each agent its own store, as separate processes would have.
			st, err := github.New(ctx, f.cfg)
			if err == nil {
				_, err = st.AddTask(ctx, fmt.Sprintf("agent%d", i), task.NewTask{Title: fmt.Sprintf("t%d", i)})
			}
			errs[i] = err
		})
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	all, err := f.store.Tasks(ctx, task.Filter{})
	require.NoError(t, err)
	require.Len(t, all, n, "every add is in the map")
	for i := range n {
		wg.Go(func() {
			_, errs[i] = f.store.Update(ctx, "codex", all[i].ID, task.Change{Status: ptr(task.InProgress)})
		})
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	all, err = f.store.Tasks(ctx, task.Filter{Status: task.InProgress})
	require.NoError(t, err)
	assert.Len(t, all, n)
	log, err := f.store.Log(ctx, "")
	require.NoError(t, err)
	assert.Len(t, log, 2*n)
}

func TestGitHubCorruptMap(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fakegithub.Options{})
	ctx := context.Background()
	path := filepath.Join(f.cfg.Dir, "id-map.json")
	require.NoError(t, os.WriteFile(path, []byte("{not json"), 0o600))
	_, err := f.store.Tasks(ctx, task.Filter{})
	require.ErrorIs(t, err, task.ErrCorrupt)
	assert.Contains(t, err.Error(), path)
	_, err = f.store.AddTask(ctx, "planner", task.NewTask{Title: "a"})
	require.ErrorIs(t, err, task.ErrCorrupt)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "{not json", string(b), "never replaced")
}

func TestGitHubListLeavesOutAGoneIssue(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fakegithub.Options{})
	var warned []string
	f.cfg.Warn = func(s string) { warned = append(warned, s) }
	st, err := github.New(context.Background(), f.cfg)
	require.NoError(t, err)
	ctx := context.Background()
	for _, title := range []string{"kept", "deleted on GitHub"} {
		_, err := st.AddTask(ctx, "planner", task.NewTask{Title: title})
		require.NoError(t, err)
	}
	require.NoError(t, f.srv.Edit(repo, 2, "deleted=true"))

	ts, err := st.Tasks(ctx, task.Filter{})
	require.NoError(t, err)
	require.Len(t, ts, 1)
	assert.Equal(t, "kept", ts[0].Title)
	assert.Equal(t, []string{"task 2: issue #2 is gone from " + repo + " (deleted or transferred); left out"}, warned)
	_, err = st.Task(ctx, "2")
	assert.ErrorIs(t, err, task.ErrNotFound, "the task itself says it is gone")
}

func TestGitHubUpdateKeepsALabelAddedMeanwhile(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fakegithub.Options{})
	ctx := context.Background()
	_, err := f.store.AddTask(ctx, "planner", task.NewTask{Title: "a", Assignee: "codex"})
	require.NoError(t, err)
	require.NoError(t, f.srv.Edit(repo, 1, "+label=bug"))
	_, err = f.store.Update(ctx, "human", "1", task.Change{Status: ptr(task.InProgress), Force: true})
	require.NoError(t, err)

	// Someone labels the issue between party's read and its write.
	require.NoError(t, f.srv.EditBeforeWrite(repo, 1, "+label=needs-review"))
	up, err := f.store.Update(ctx, "codex", "1", task.Change{Status: ptr(task.Done), Assignee: ptr("claude")})
	require.NoError(t, err)
	assert.Equal(t, task.Done, up.Status)
	assert.Equal(t, "claude", up.Assignee)
	is := f.issue(t, 1)
	assert.Equal(t, "closed", is.State)
	assert.ElementsMatch(t, []string{"bug", "needs-review", "party:done", "party:assignee:claude"}, is.Labels)

	// A done task back to work reopens; the others' labels stay.
	_, err = f.store.Update(ctx, "human", "1", task.Change{Status: ptr(task.Pending), Force: true})
	require.NoError(t, err)
	is = f.issue(t, 1)
	assert.Equal(t, "open", is.State)
	assert.ElementsMatch(t, []string{"bug", "needs-review", "party:pending", "party:assignee:claude"}, is.Labels)
}

func TestGitHubDoneMilestoneOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fakegithub.Options{})
	ctx := context.Background()
	_, err := f.store.AddMilestone(ctx, "planner", "v1")
	require.NoError(t, err)
	const n = 4
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			st, err := github.New(ctx, f.cfg)
			if err == nil {
				_, err = st.DoneMilestone(ctx, fmt.Sprintf("agent%d", i), "M1")
			}
			errs[i] = err
		})
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	log, err := f.store.Log(ctx, "")
	require.NoError(t, err)
	var done int
	for _, e := range log {
		if e.Event == "milestone_done" {
			done++
		}
	}
	assert.Equal(t, 1, done, "one milestone_done however many close it at once")
	var patches int
	for _, e := range mustLog(t, f.srv.LogPath()) {
		if e.Method == "PATCH" {
			patches++
		}
	}
	assert.Equal(t, 1, patches)
}

// TestGitHubLockWaitsForItsHolder: the team's lock held by another
// process is waited for (asleep on its flock, no poll) until the holder
// lets go, or until ctx ends.
func TestGitHubLockWaitsForItsHolder(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fakegithub.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := github.New(ctx, f.cfg)
	require.NoError(t, err)
	// Another process holds the team's lock.
	unlock, err := state.Locker{Dir: filepath.Join(f.cfg.Dir, "locks")}.Lock(ctx, "github-store")
	require.NoError(t, err)
	short, cancelShort := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancelShort()
	_, err = st.AddMilestone(short, "planner", "v1")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	go func() {
		time.Sleep(100 * time.Millisecond)
		unlock()
	}()
	_, err = st.AddMilestone(ctx, "planner", "v1")
	require.NoError(t, err)
}

func TestLookGhSkipsRelativePath(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "bin"), 0o755))
	for _, p := range []string{"gh", "bin/gh"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte("#!/bin/sh\necho planted\n"), 0o755))
	}
	abs := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(abs, "gh"), []byte("#!/bin/sh\n"), 0o755))
	for _, path := range []string{"", ".", "bin", ":bin:.", "./bin"} {
		_, err := github.LookGh("", []string{"PATH=" + path})
		assert.ErrorIs(t, err, exec.ErrNotFound, "PATH=%q: the gh in the current directory is not run", path)
	}
	got, err := github.LookGh("", []string{"PATH=.:bin:" + abs})
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(abs, "gh"), got, "the first absolute directory's")
	_, err = github.LookGh("bin/gh", nil)
	assert.ErrorIs(t, err, exec.ErrNotFound, "a relative path to gh")
	got, err = github.LookGh(filepath.Join(abs, "gh"), nil)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(abs, "gh"), got)

	// The store finds no gh there either: unavailable, not the planted one.
	_, err = github.New(context.Background(), github.Config{Dir: filepath.Join(t.TempDir(), "team"), Repo: repo, Env: []string{"PATH=.:bin"}})
	require.ErrorIs(t, err, task.ErrUnavailable)
	assert.Contains(t, err.Error(), "not found")
}

func TestGitHubAssigneeIsARole(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fakegithub.Options{})
	ctx := context.Background()
	for _, bad := range []string{"-x", "a b", "a,b", "x`y", "**bold**", strings.Repeat("r", 36)} {
		_, err := f.store.AddTask(ctx, "planner", task.NewTask{Title: "a", Assignee: bad})
		assert.ErrorIs(t, err, task.ErrInvalid, bad)
	}
	_, err := f.store.AddTask(ctx, "planner", task.NewTask{Title: "a", Assignee: strings.Repeat("r", 35)})
	require.NoError(t, err, "party:assignee: and 35 is GitHub's 50")
	_, err = f.store.Update(ctx, "planner", "1", task.Change{Assignee: ptr("x`y")})
	assert.ErrorIs(t, err, task.ErrInvalid)
}
