package realagent

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// TokenVar is the variable that marks every process a test started: the
// test puts TokenVar=<random token> in the environment of what it starts,
// children inherit it, and Reap finds them all by it, daemons that left
// their process group included (Codex's app-server).
const TokenVar = "PARTY_TEST_TOKEN"

// Reap SIGKILLs every process whose environment holds exactly
// TokenVar=token, read from /proc/*/environ, never the calling process,
// and returns their PIDs. It scans again until a scan finds none, so a
// child forked during a scan is reaped too; processes of other users,
// which it cannot read, are left alone. An empty token is an error.
func Reap(token string) ([]int, error) {
	if token == "" {
		return nil, errors.New("realagent: Reap needs a token")
	}
	want := []byte(TokenVar + "=" + token)
	self := os.Getpid()
	var killed []int
	seen := map[int]bool{}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		pids, err := marked(want, self)
		if err != nil {
			return killed, err
		}
		fresh := 0
		for _, pid := range pids {
			// A killed process lingers as a zombie until its parent
			// waits, but a zombie has no environ to match.
			if err := syscall.Kill(pid, syscall.SIGKILL); err == nil && !seen[pid] {
				seen[pid] = true
				killed = append(killed, pid)
				fresh++
			}
		}
		if len(pids) == 0 {
			return killed, nil
		}
		if fresh == 0 {
			time.Sleep(10 * time.Millisecond)
		}
	}
	return killed, errors.New("realagent: Reap: processes carrying the token are still running")
}

// marked returns the PIDs, other than self, whose environment holds the
// entry want.
func marked(want []byte, self int) ([]int, error) {
	paths, err := filepath.Glob("/proc/[0-9]*/environ")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, p := range paths {
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile(p)
		if err != nil {
			continue // gone, or not ours to read
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.Equal(kv, want) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids, nil
}

// Marked returns the PIDs of the processes, other than the calling one,
// whose environment holds exactly TokenVar=token.
func Marked(token string) ([]int, error) {
	if token == "" {
		return nil, errors.New("realagent: Marked needs a token")
	}
	return marked([]byte(TokenVar+"="+token), os.Getpid())
}
