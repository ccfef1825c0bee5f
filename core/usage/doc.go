// Package usage holds the one usage error: a command line or an option that
// asks for something party cannot do (a bad --pane, --size or --cwd, a
// wrong number of arguments, an unknown flag). Every package may return
// it, wrapped with what was wrong; core/party's error table maps it to
// USAGE and exit status 2, and errors.Is finds it through any wrapping.
//
// It is a package of its own so that no package has to import another
// (core/session, core/party) only to say "usage".
package usage

import "errors"

// Err is the usage error. Wrap it: fmt.Errorf("%w: --size %q: …", usage.Err, s).
var Err = errors.New("usage")
