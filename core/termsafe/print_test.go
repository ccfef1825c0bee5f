package termsafe

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// paneRow is a row of a listing: its cells.
type paneRow []string

func (r paneRow) Row() []string { return r }

func TestWriteTable(t *testing.T) {
	var out bytes.Buffer
	rows := Rows([]paneRow{{"planner", "%0", "claude", "7", "-", "claude"}, {"-", "%12", "-", "0", "dead", "bash"}})
	require.NoError(t, WriteTable(&out, []string{"ROLE", "PANE", "AGENT", "PID", "DEAD", "COMMAND"}, rows))
	assert.Equal(t, "ROLE     PANE  AGENT   PID  DEAD  COMMAND\n"+
		"planner  %0    claude  7    -     claude\n"+
		"-        %12   -       0    dead  bash\n", out.String())
}

func TestWriteTableIsTerminalSafe(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, WriteTable(&out, []string{"TITLE"}, [][]string{{"a\x1b]52;c;eA==\x07\u009b"}}))
	assert.Equal(t, "TITLE\n"+`a\x1b]52;c;eA==\a\u009b`+"\n", out.String())
}

func TestWriteJSONEscapesC1ExactlyAndKeepsMarkup(t *testing.T) {
	var out bytes.Buffer
	in := map[string]string{"answer": "\x1b[2J\u009b\u0085\x7f ok"}
	require.NoError(t, WriteJSON(&out, in))
	assert.Equal(t, "{\n  \"answer\": \"\\u001b[2J\\u009b\\u0085\\u007f ok\"\n}\n", out.String())
	var back map[string]string
	require.NoError(t, json.Unmarshal(out.Bytes(), &back))
	assert.Equal(t, in, back, "exact for a JSON reader")
}

func TestWriteJSONKeepsMarkup(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, WriteJSON(&out, map[string]string{"text": "a <b> & c"}))
	assert.Equal(t, "{\n  \"text\": \"a <b> & c\"\n}\n", out.String())
}
