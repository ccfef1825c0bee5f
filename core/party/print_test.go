package party

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/session"
)

func TestWriteTable(t *testing.T) {
	var out bytes.Buffer
	rows := Rows([]session.PaneRow{{Role: "planner", Pane: "%0", Agent: "claude", PID: 7, Command: "claude"}, {Pane: "%12", Dead: true, Command: "bash"}})
	require.NoError(t, WriteTable(&out, PaneHeader(), rows))
	assert.Equal(t, "ROLE     PANE  AGENT   PID  DEAD  COMMAND\n"+
		"planner  %0    claude  7    -     claude\n"+
		"-        %12   -       0    dead  bash\n", out.String())
}

func TestWriteJSONKeepsMarkup(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, WriteJSON(&out, map[string]string{"text": "a <b> & c"}))
	assert.Equal(t, "{\n  \"text\": \"a <b> & c\"\n}\n", out.String())
}
