package realagent

import (
	"os"
	"testing"

	"github.com/partyhq/party/internal/testhome"
)

// TestMain runs the tests in a home of their own (testhome).
func TestMain(m *testing.M) { os.Exit(testhome.Main(m)) }
