package daemon

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/termsafe"
)

// Logger returns a logger that writes timestamped lines to w (the hidden
// window's stderr) and appends them to the log file of dir (LogFile).
func Logger(clk clock.Clock, w io.Writer, dir string) func(string, ...any) {
	return func(format string, args ...any) {
		line := clk.Now().UTC().Format(time.RFC3339Nano) + " " + termsafe.Text(fmt.Sprintf(format, args...)) + "\n"
		fmt.Fprint(w, line)
		if fh, err := os.OpenFile(filepath.Join(dir, LogFile), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
			_, _ = io.WriteString(fh, line)
			fh.Close()
		}
	}
}
