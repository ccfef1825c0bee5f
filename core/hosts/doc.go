// Package hosts reaches party on other machines ("hosts") through
// OpenSSH, and nothing else: no port is opened on any network and no new
// daemon is trusted. Each host keeps its own tmux server, supervisors and
// stores; this package only carries calls to them.
//
// Its parts: Host is a host as configuration names it (a name, an SSH
// destination and the remote party program); CheckName, CheckDest and
// CheckProgram refuse what is not a plain token; Quote and RemoteCommand
// build the remote command line; Run and RunInput run ssh through a Runner
// (ExecRunner, or a test's fake) and turn its failures into an *Error
// whose Reason says why (authentication, host key, timeout, refused, no
// party there, a connection lost after it began); Dial starts the API bridge (party supervise bridge) on a
// host and gives it as a net.Conn after its Hello, whose version must be
// this party's (*VersionError); Serve is the remote end of that bridge.
//
// The rule of the remote command line. ssh joins the words of the remote
// command with spaces and the REMOTE user's shell parses the result, so
// argv safety ends at ssh's own argv. The remote command therefore holds
// only fixed words (party's subcommands and flags) and tokens that match
// a strict pattern (host, session and role names: CheckWord), each
// single-quoted by Quote, and RemoteCommand refuses anything else. Text a
// user or an agent wrote (a message, a trigger's text) never goes on the
// remote command line: it goes over ssh's stdin, inside the body of an
// HTTP request carried by the bridge, or as the stdin of a remote party
// command that reads its text there (RunInput: party send ROLE -).
//
// The bridge, step by step:
//  1. The local side runs ssh -o BatchMode=yes -o ConnectTimeout=5
//     -o ServerAliveInterval=10 -o ServerAliveCountMax=3 -T -- DEST PARTY
//     supervise bridge --session S, with pipes for its stdin and stdout.
//  2. The remote party finds the session's supervisor socket and writes
//     one Hello line: the bridge protocol, its version, and an error
//     (its stable code and message) when it cannot bridge.
//  3. The local side reads the Hello within its deadline and checks the
//     protocol and the version (*VersionError when they differ).
//  4. From then on the remote copies stdin to the socket and the socket
//     to stdout until the supervisor closes; the end of stdin (the local
//     side closed) is a half-close of the socket, after which the
//     supervisor answers what it was asked and closes. The local side uses
//     the pipes as one net.Conn on which net/http sends its requests,
//     reused for the command's life.
package hosts
