package remote

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/hosts"
	"github.com/partyhq/party/core/supervise"
	"github.com/partyhq/party/core/usage"
)

func TestNamed(t *testing.T) {
	cfg := config.Config{Hosts: map[string]config.Host{"box": {SSH: "me@box", Party: "/opt/party"}, "alpha": {Party: "/p"}}}
	tests := []struct {
		name  string
		names []string
		want  []hosts.Host
	}{
		{"every configured host, by name", nil, []hosts.Host{
			{Name: "alpha", Dest: "alpha", Program: "/p", Configured: true},
			{Name: "box", Dest: "me@box", Program: "/opt/party", Configured: true}}},
		{"a destination, once", []string{"me@other", "box", "me@other"}, []hosts.Host{
			{Name: "me@other", Dest: "me@other", Program: hosts.DefaultProgram},
			{Name: "box", Dest: "me@box", Program: "/opt/party", Configured: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Named(cfg, tt.names)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	_, err := Named(cfg, []string{"me@box;touch pwned"})
	assert.ErrorIs(t, err, usage.Err)
	assert.ErrorIs(t, err, hosts.ErrName)
}

func TestViewRows(t *testing.T) {
	h := hosts.Host{Name: "box", Dest: "me@box"}
	tests := []struct {
		name string
		view View
		want [][]string
	}{
		{"unreachable", View{Host: h, Error: &ErrorInfo{Code: "HOST_TIMEOUT"}},
			[][]string{{"box", "me@box", "HOST_TIMEOUT", "-", "-", "-"}}},
		{"up, no sessions", View{Host: h, Reachable: true, Version: "v1"},
			[][]string{{"box", "me@box", "up", "v1", "-", "-"}}},
		{"a session each row", View{Host: h, Reachable: true, Version: "v1", Sessions: []Session{
			{Name: "s", Runtimes: []supervise.Runtime{{Role: "claude", Status: "ready"}}},
			{Name: "t", Error: &ErrorInfo{Code: "NO_SUPERVISOR"}}}},
			[][]string{{"box", "me@box", "up", "v1", "s", "claude:ready"}, {"box", "me@box", "up", "v1", "t", "NO_SUPERVISOR"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.view.Rows())
		})
	}
}

func TestCheckCaller(t *testing.T) {
	assert.NoError(t, CheckCaller("v1", "v1"))
	err := CheckCaller("v0", "v1")
	assert.ErrorIs(t, err, hosts.ErrVersion)
	assert.ErrorContains(t, err, "the party there is v1, the calling party v0")
}

func TestReportedError(t *testing.T) {
	var e *hosts.Error
	require.ErrorAs(t, reportedError("box", []byte(`{"error":{"code":"USAGE","message":"unknown flag: --caller-version"}}`)), &e,
		"a party too old to know the flag")
	assert.ErrorIs(t, e, hosts.ErrNoBridge)
	var re *hosts.RemoteError
	require.ErrorAs(t, reportedError("box", []byte(`[{"role":"a"},{"role":"b","error":{"code":"PANE_DEAD","message":"dead"}}]`)), &re)
	assert.Equal(t, "PANE_DEAD", re.Code)
	assert.NoError(t, reportedError("box", []byte(`{"role":"a"}`)))
}
