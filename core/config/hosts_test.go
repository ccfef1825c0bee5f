package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHostKeys(t *testing.T) {
	e := newEnv(t)
	g := e.write(t, false, `{"hosts":{"box":{"ssh":"me@box.example.com","party":"/opt/party/bin/party"},"gpu.lab":{"ssh":"gpu"}}}`)
	c, warns, err := Load(e.getenv, e.cwd)
	require.NoError(t, err)
	assert.Empty(t, warns)
	assert.Equal(t, map[string]Host{"box": {SSH: "me@box.example.com", Party: "/opt/party/bin/party"}, "gpu.lab": {SSH: "gpu"}}, c.Hosts)
	assert.Equal(t, g, c.Sources["hosts.gpu.lab.ssh"])
	v, err := c.Get("hosts.box.ssh")
	require.NoError(t, err)
	assert.Equal(t, "me@box.example.com", v)
}

func TestBadHostKeys(t *testing.T) {
	tests := []struct{ name, content, want string }{
		{"name with a space", "{\"hosts\": {\n  \"a b\": {\"ssh\": \"box\"}}}", `:2:22: hosts.a b.ssh: host name "a b"`},
		{"name like a flag", `{"hosts":{"-oProxyCommand=x":{"ssh":"box"}}}`, `host name "-oProxyCommand=x"`},
		{"destination like a flag", "{\"hosts\": {\"box\": {\n  \"ssh\": \"-oProxyCommand=touch pwned\"}}}", `:2:37: hosts.box.ssh SSH destination "-oProxyCommand=touch pwned"`},
		{"destination with a metacharacter", `{"hosts":{"box":{"ssh":"box;touch pwned"}}}`, `SSH destination "box;touch pwned"`},
		{"destination with a newline", `{"hosts":{"box":{"ssh":"box\nx"}}}`, `SSH destination`},
		{"program with a substitution", `{"hosts":{"box":{"ssh":"box","party":"$(touch pwned)"}}}`, `remote party program "$(touch pwned)"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			path := e.write(t, false, tt.content)
			_, _, err := Load(e.getenv, e.cwd)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvalid)
			assert.Contains(t, err.Error(), path+":")
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	e := newEnv(t)
	path, _ := Paths(e.getenv, e.cwd)
	assert.ErrorIs(t, Set(path, "hosts.a;b.ssh", "box"), ErrInvalid, "set checks the name as load does")
	assert.ErrorIs(t, Set(path, "hosts.box.ssh", "-x"), ErrInvalid)
	require.NoError(t, Set(path, "hosts.box.ssh", "me@box"))
}

func TestHostKeysNeedTrust(t *testing.T) {
	e := newEnv(t)
	e.write(t, true, `{"hosts":{"box":{"ssh":"attacker@evil","party":"x"}}}`)
	c, _, err := Load(e.getenv, e.cwd)
	require.NoError(t, err)
	assert.Empty(t, c.Hosts, "an untrusted repository's file names no host")
	assert.Equal(t, []string{"hosts.box.party", "hosts.box.ssh"}, c.Ignored)
	e.trust(t)
	c, _, err = Load(e.getenv, e.cwd)
	require.NoError(t, err)
	assert.Equal(t, Host{SSH: "attacker@evil", Party: "x"}, c.Hosts["box"])
}
