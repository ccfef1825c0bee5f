package cli

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/exitcode"
	"github.com/partyhq/party/core/party"
)

func TestHostsArgs(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want any // nil: a usage error
	}{
		{"every configured host", []string{"hosts"}, HostsOptions{Names: []string{}}},
		{"named hosts", []string{"hosts", "box", "me@gpu", "--json"}, HostsOptions{Names: []string{"box", "me@gpu"}}},
		{"version", []string{"version", "--json"}, VersionOptions{}},
		{"version takes no argument", []string{"version", "x"}, nil},
		{"bridge", []string{"supervise", "bridge", "--session", "s"}, SuperviseBridgeOptions{}},
		{"bridge takes no argument", []string{"supervise", "bridge", "x"}, nil},
		{"runtimes here", []string{"runtimes"}, RuntimesOptions{}},
		{"runtimes on a host", []string{"runtimes", "--host", "box", "--json"}, RuntimesOptions{Host: "box"}},
		{"runtimes takes no argument", []string{"runtimes", "claude@box"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, _ := testFactory("")
			var got any
			sup := newSuperviseCmd(f)
			for _, c := range sup.Commands() {
				if c.Name() == "bridge" {
					sup.RemoveCommand(c)
				}
			}
			sup.AddCommand(newSuperviseBridgeCmd(f, capture[SuperviseBridgeOptions](&got)))
			err := execute(f, tt.args, newHostsCmd(f, capture[HostsOptions](&got)), newVersionCmd(f, capture[VersionOptions](&got)), sup,
				newRuntimesCmd(f, capture[RuntimesOptions](&got)))
			if tt.want == nil {
				assert.ErrorIs(t, err, party.ErrUsage)
				assert.Nil(t, got, "nothing runs")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestVersionJSON(t *testing.T) {
	f, out, _ := testFactory("")
	require.NoError(t, execute(f, []string{"version", "--json"}))
	var v party.VersionInfo
	require.NoError(t, json.Unmarshal(out.Bytes(), &v))
	assert.NotEmpty(t, v.Version)
	assert.Equal(t, 1, v.Bridge)
}

func TestHostsBadNameIsUsage(t *testing.T) {
	f, out, errOut := testFactory("")
	code := runRoot(t.Context(), f, NewRootCmd(f), []string{"hosts", "--json", "--", "-oProxyCommand=touch pwned"})
	assert.Equal(t, exitcode.ExitUsage, code)
	var got struct{ Error exitcode.ErrorInfo }
	require.NoError(t, json.Unmarshal(out.Bytes(), &got))
	assert.Equal(t, "USAGE", got.Error.Code)
	assert.Contains(t, got.Error.Message, `SSH destination "-oProxyCommand=touch pwned"`)
	assert.Contains(t, errOut.String(), "SSH destination")
}

// TestCallerVersion: a command another host's party runs here for a
// party of another version is refused (VERSION_MISMATCH, exit 11) before
// it acts; this version's goes on.
func TestCallerVersion(t *testing.T) {
	f, out, _ := testFactory("")
	exit := Run(context.Background(), f, []string{"send", "--caller-version=v0.0.1-old", "claude", "hi", "--json"})
	assert.Equal(t, exitcode.ExitVersion, exit)
	assert.Contains(t, out.String(), `"code": "VERSION_MISMATCH"`)

	f, out, _ = testFactory("")
	exit = Run(context.Background(), f, []string{"version", "--caller-version=" + party.Version(f.Getenv), "--json"})
	assert.Equal(t, exitcode.ExitOK, exit)
	assert.Contains(t, out.String(), `"version"`)
}
