// Package scenarios is party's end-to-end suite: testscript files in
// testdata/<area>_<case>.txtar run the real party CLI and the mock agents
// against real tmux, each scenario on its own private server (-L) that is
// killed when the scenario ends. tmux missing is a failure, never a skip.
//
// $GOLDEN is the golden/ directory: a cast kept in golden/transcripts
// starts a recorded agent in one line,
//
//	exec party start --pane 'claude=mockagent --replay '$GOLDEN'/transcripts/x.cast'
//
// Besides testscript's built-ins, scenarios have these commands:
//
//	tmux ARGS...                 tmux on the scenario's server
//	screen TARGET                print the screen of a pane (id or role) to stdout
//	waitscreen TARGET REGEXP     wait until the pane's screen matches
//	waitfor REGEXP CMD ARGS...   run CMD until its stdout matches
//	mocklog count N              wait until the mock log has N entries, fail if it has more
//	mocklog text I FILE          entry I (from 0) holds exactly the bytes of FILE
//	mocklog is I TEXT            entry I holds exactly TEXT
//	mocklog field I KEY VALUE    entry I has KEY (agent, mode, pane) equal to VALUE
//	mocklog set FILE             the texts are exactly the lines of FILE, in any order
//	mocklog none                 the mock log has no entries
//	gen crlf|lines100|kb100 FILE   write a generated text to FILE and what must arrive to FILE.want
//	golden NAME                  stdout, normalized, equals golden/NAME (-update rewrites)
package scenarios
