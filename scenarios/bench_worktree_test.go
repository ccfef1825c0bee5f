package scenarios

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// worktreeFiles is the size of the repository BenchmarkWorktree works on,
// worktreeRounds how many rounds it measures.
const (
	worktreeFiles  = 10000
	worktreeRounds = 3
)

// BenchmarkWorktree measures party start --worktree of three mock agents
// (claude, codex, gemini) on a repository of 10,000 files, from the
// command's start to every agent showing its input box, next to a plain
// start of the same team in the same folder (the ratio), and party diff
// --json of one agent's tree holding a change; beside them, what git
// alone takes to make one such worktree (git worktree add), the machine's
// floor. Each round stops the team and removes its worktrees untimed.
// Measured worktreeRounds rounds, whatever b.N.
func BenchmarkWorktree(b *testing.B) {
	s := newBench(b, "on *\n  say ok\n", "bot=sh -c 'echo mock\\>; exec cat'")
	repo := filepath.Join(b.TempDir(), "repo")
	makeRepo(b, repo, worktreeFiles)
	roles := []string{"claude", "codex", "gemini"}
	ready := map[string]string{"claude": "❯\u00a0", "codex": "› Ask Codex", "gemini": "Type your message"}
	start := func(name string, extra ...string) time.Duration {
		args := append([]string{"start", "--session", name, "--no-attach", "--cwd", repo}, extra...)
		for _, r := range roles {
			args = append(args, "--pane", r)
		}
		t0 := time.Now()
		s.party(b, args...)
		for _, r := range roles {
			s.waitScreen(b, strings.TrimSpace(s.party(b, "--session", name, "resolve", r)), ready[r])
		}
		return time.Since(t0)
	}
	var plain, wt, diff, git []time.Duration
	b.ResetTimer()
	for i := 0; i < worktreeRounds; i++ {
		plain = append(plain, start(fmt.Sprintf("p%d", i)))
		b.StopTimer()
		s.party(b, "stop", fmt.Sprintf("p%d", i))
		b.StartTimer()
		name := fmt.Sprintf("w%d", i)
		wt = append(wt, start(name, "--worktree"))
		b.StopTimer()
		out := s.party(b, "--session", name, "panes", "--json")
		tree := between(out, `"worktree": "`, `"`)
		if err := os.WriteFile(filepath.Join(tree, "d000", "f0000.txt"), []byte("changed\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t0 := time.Now()
		if out := s.partyIn(b, repo, "--session", name, "diff", "claude", "--json"); !strings.Contains(out, `"path": "d000/f0000.txt"`) {
			b.Fatalf("diff --json misses the change:\n%s", out)
		}
		diff = append(diff, time.Since(t0))
		b.StopTimer()
		s.party(b, "stop", name)
		for _, r := range roles {
			s.partyIn(b, repo, "--session", name, "worktree", "remove", r, "--force")
		}
		plainTree := filepath.Join(filepath.Dir(repo), "plain")
		t0 = time.Now()
		runGit(b, repo, "worktree", "add", "-q", "--detach", plainTree)
		git = append(git, time.Since(t0))
		runGit(b, repo, "worktree", "remove", "--force", plainTree)
		b.StartTimer()
	}
	b.StopTimer()
	report(b, "plain-start", plain)
	report(b, "worktree-start", wt)
	report(b, "diff-json", diff)
	report(b, "git-worktree-add", git)
	var p, w time.Duration
	for i := range plain {
		p, w = p+plain[i], w+wt[i]
	}
	b.ReportMetric(float64(w)/float64(p), "worktree/plain")
}

// partyIn runs party in dir.
func (s *benchServer) partyIn(b *testing.B, dir string, args ...string) string {
	b.Helper()
	cmd := exec.Command(s.bin, args...)
	cmd.Env, cmd.Dir = s.environ(), dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("party %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// makeRepo makes a git repository at dir with n small files in folders of
// 100, in one commit.
func makeRepo(b *testing.B, dir string, n int) {
	b.Helper()
	for i := 0; i < n; i++ {
		sub := filepath.Join(dir, fmt.Sprintf("d%03d", i/100))
		if i%100 == 0 {
			if err := os.MkdirAll(sub, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%04d.txt", i%100)), []byte(fmt.Sprintf("file %d\n", i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"commit", "-q", "-m", "files"}} {
		runGit(b, dir, args...)
	}
}

// runGit runs git in dir, failing the benchmark on an error.
func runGit(b *testing.B, dir string, args ...string) {
	b.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@b", "GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@b")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// between is the text of s between the first before and the after that
// follows it.
func between(s, before, after string) string {
	_, rest, _ := strings.Cut(s, before)
	v, _, _ := strings.Cut(rest, after)
	return v
}
