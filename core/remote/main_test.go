package remote

import (
	"os"
	"testing"

	"github.com/partyhq/party/core/testhome"
)

// TestMain runs the tests in a home of their own (testhome).
func TestMain(m *testing.M) { os.Exit(testhome.Main(m)) }
