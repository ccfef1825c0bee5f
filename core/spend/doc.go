// Package spend says what the agents spent: the tokens of each model
// response, read from the agents' own records — Claude Code's transcript,
// Codex's rollout, Gemini CLI's chat file — never estimated.
//
// The parts:
//   - Parse turns one line of an agent's record into a Response, when the
//     line carries usage (Claude's assistant entries, Codex's
//     token_usage_record, Gemini's "gemini" records); a File keeps what a
//     line needs of the lines before it (Codex's model).
//   - Ledger is a team's ledger in its state dir, a SQLite file
//     (ledger.db): the responses read so far, each once (Claude repeats a
//     response's usage on each of its content blocks: the largest
//     reading counts), their running sums by role, agent, model and
//     quarter hour, and how far each record file was read, written in one
//     transaction. Scan reads only what was appended to each file since,
//     and starts a file again when the agent rewrote it; Sums is what
//     party usage adds up, so its cost follows the groups, not the
//     history.
//   - Totals groups sums by role, team, model, agent or day; TurnOf is
//     what one turn spent, and AwaitTurns waits for the records of turns
//     that just ended.
//   - Budgets says where a team stands against budget.*, and Guard
//     refuses a send to a role whose budget is spent (ErrBudget) unless
//     overridden, said in the event log (budget.go, report.go).
//   - Row and Header are a sum and a budget as party usage prints them
//     (report.go).
//   - TeamSpend is a team party keeps as spending sees it, read from its
//     record (ReadTeam: its ledger, its agents' roles, whose records can
//     be read); Tally is party usage's Report over teams, its Guard the
//     team's budgets (GuardIn: with its folder's configuration as it is
//     now; Held: the budget a role reached, the supervisor's look before a
//     delivery), AnsweredTurn what a trigger's turn spent (team.go).
//
// Token kinds are normalized across agents: Input is the input not read
// from a cache (Codex and Gemini count the cached part inside their
// input; Claude outside it), CacheRead and CacheWrite the cached input,
// Output the output, Reasoning the output spent thinking where the agent
// records it apart (Codex, Gemini; Claude counts it in Output).
package spend
