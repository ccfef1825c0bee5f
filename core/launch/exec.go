package launch

import (
	"fmt"
	"os"
	"syscall"
)

// Exec replaces the process with the program of the spec at path (what
// tmux runs in party's panes): in its directory, with environ and the
// spec's environment. It returns only when that fails.
func Exec(path string, environ []string) error {
	s, err := Read(path)
	if err != nil {
		return err
	}
	prog, argv, env, err := s.Resolve(environ)
	if err != nil {
		return err
	}
	if s.Dir != "" {
		if err := os.Chdir(s.Dir); err != nil {
			return fmt.Errorf("launch: %w", err)
		}
	}
	if err := syscall.Exec(prog, argv, env); err != nil {
		return fmt.Errorf("launch %s: %w", prog, err)
	}
	return nil
}
