package session

import (
	"encoding/xml"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/usage"
)

// The systemd unit gives back, read as systemd reads it, the exact argv
// and environment, whatever the path holds.
func TestSystemdUnitReadsBackAsGiven(t *testing.T) {
	exe := `/opt/my "party" 100%/$HOME\bin/party`
	env := []string{"PATH=/usr/bin:/opt/a b", "PARTY_TMUX_SOCKET=/tmp/x%y"}
	unit, err := Unit("systemd", exe, env)
	require.NoError(t, err)
	var gotEnv []string
	var gotArgv []string
	for _, line := range strings.Split(unit, "\n") {
		if v, ok := strings.CutPrefix(line, "Environment="); ok {
			w := systemdWords(t, v, false)
			require.Len(t, w, 1)
			gotEnv = append(gotEnv, w[0])
		}
		if v, ok := strings.CutPrefix(line, "ExecStart="); ok {
			gotArgv = systemdWords(t, v, true)
		}
	}
	assert.Equal(t, env, gotEnv)
	assert.Equal(t, RestoreArgv(exe), gotArgv)
	assert.Contains(t, unit, "Type=oneshot\n")
	assert.Contains(t, unit, "WantedBy=default.target\n")
}

// systemdWords splits a unit line's value as systemd does for double-quoted
// words: C escapes, %% a %, and on a command line $$ a $.
func systemdWords(t *testing.T, s string, exec bool) []string {
	var out []string
	for len(s) > 0 {
		s = strings.TrimLeft(s, " ")
		if s == "" {
			break
		}
		require.Equal(t, byte('"'), s[0], "every word quoted: %q", s)
		var w strings.Builder
		i := 1
		for ; i < len(s) && s[i] != '"'; i++ {
			switch {
			case s[i] == '\\':
				i++
				c := s[i]
				if c == 'n' {
					c = '\n'
				}
				w.WriteByte(c)
			case s[i] == '%' || (exec && s[i] == '$'):
				require.Equal(t, s[i], s[i+1], "a lone %c is expanded by systemd", s[i])
				w.WriteByte(s[i])
				i++
			default:
				w.WriteByte(s[i])
			}
		}
		out = append(out, w.String())
		s = s[i+1:]
	}
	return out
}

func TestLaunchdPlistReadsBackAsGiven(t *testing.T) {
	exe := `/Applications/a & b/<party>`
	unit, err := Unit("launchd", exe, []string{"PATH=/usr/bin"})
	require.NoError(t, err)
	// The strings of the plist, in order, as launchd reads them.
	var texts []string
	dec := xml.NewDecoder(strings.NewReader(unit))
	inString := false
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			inString = tok.Name.Local == "string" || tok.Name.Local == "key"
		case xml.CharData:
			if inString {
				texts = append(texts, string(tok))
			}
		case xml.EndElement:
			inString = false
		}
	}
	args := append([]string{"ProgramArguments"}, RestoreArgv(exe)...)
	assert.Subset(t, texts, args)
	i := slices.Index(texts, "ProgramArguments")
	require.GreaterOrEqual(t, i, 0)
	assert.Equal(t, args, texts[i:i+len(args)], "the argv, in order, right after its key")
	assert.Equal(t, []string{"PATH", "/usr/bin"}, texts[slices.Index(texts, "PATH"):slices.Index(texts, "PATH")+2])
	assert.Contains(t, unit, "<key>RunAtLoad</key>")

	_, err = Unit("upstart", exe, nil)
	assert.ErrorIs(t, err, usage.Err)
}
