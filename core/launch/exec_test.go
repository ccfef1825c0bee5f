package launch

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExecHelper is the process that Exec replaces, run by TestExec.
func TestExecHelper(t *testing.T) {
	path := os.Getenv("LAUNCH_TEST_SPEC")
	if path == "" {
		t.Skip("run by TestExec")
	}
	err := Exec(path, []string{"PATH=/usr/bin:/bin", "KEEP=1"})
	t.Fatalf("Exec returned: %v", err)
}

func TestExec(t *testing.T) {
	dir := t.TempDir()
	work := filepath.Join(dir, "work dir")
	require.NoError(t, os.Mkdir(work, 0o755))
	path := filepath.Join(dir, "spec.json")
	require.NoError(t, Write(path, Spec{Argv: []string{"sh", "-c", `echo "$PWD|$KEEP|$ROLE|$0"`, "named"}, Env: []string{"ROLE=a;b"}, Dir: work}))

	cmd := exec.Command(os.Args[0], "-test.run=^TestExecHelper$")
	cmd.Env = append(os.Environ(), "LAUNCH_TEST_SPEC="+path)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Equal(t, work+"|1|a;b|named\n", string(out), "the program runs in its dir with the spec's env over environ")

	require.NoError(t, Write(path, Spec{Argv: []string{"no-such-program-x"}}))
	cmd = exec.Command(os.Args[0], "-test.run=^TestExecHelper$")
	cmd.Env = append(os.Environ(), "LAUNCH_TEST_SPEC="+path)
	out, err = cmd.CombinedOutput()
	assert.Error(t, err)
	assert.Contains(t, string(out), "Exec returned")
}
