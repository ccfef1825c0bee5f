package talk

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/wait"
)

func TestASpilledTextCarriesTheMarkerInstructionInItsPointer(t *testing.T) {
	d := Deps{Clock: clock.Real{}, Config: config.Defaults(), StateDir: t.TempDir()}
	long := strings.Repeat("a line of a very long message\n", 20000) // 600 KB
	text, spec, err := d.NewSpec(mux.Pane{ID: "%1", Role: "bot", Agent: "generic"}, long, false)
	require.NoError(t, err)
	require.NotEmpty(t, spec.Nonce)
	assert.Less(t, len(text), 1000, "a pointer, not the text")
	assert.Contains(t, text, wait.Instruction(spec.Nonce), "the pointer itself says how to finish")
	path := regexp.MustCompile(`file (\S+)`).FindStringSubmatch(text)
	require.NotNil(t, path, text)
	file, err := os.ReadFile(path[1])
	require.NoError(t, err)
	assert.Equal(t, long, string(file), "the file holds the message, nothing of party's")
	assert.Equal(t, text, spec.Prompt, "the wait follows the pointer")
}
