package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/review"
)

// InstructionsOptions are the inputs of party instructions.
type InstructionsOptions struct {
	Agent string // claude | codex
}

func newInstructionsCmd(f *Factory, runF func(context.Context, *InstructionsOptions) error) *cobra.Command {
	opts := &InstructionsOptions{}
	return &cobra.Command{
		Use:   "instructions claude|codex|pm",
		Short: "Print the review-loop and task instructions for CLAUDE.md or AGENTS.md",
		Long: `Print Markdown that tells an agent how party's review loop works: for
claude, the implementer (add it to CLAUDE.md); for codex, the reviewer (add
it to AGENTS.md). Both end with the party pm commands for the team's tasks;
pm prints only those, short enough for a preamble. For example:
party instructions claude >> CLAUDE.md`,
		Args:      argsBetween(1, 1),
		ValidArgs: []string{"claude", "codex", "pm"},
		RunE: func(c *cobra.Command, args []string) error {
			opts.Agent = args[0]
			if _, ok := instructions[opts.Agent]; !ok {
				return fmt.Errorf("%w: unknown agent %q (want claude, codex or pm)", errUsage, opts.Agent)
			}
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return instructionsRun(f, opts)
		},
	}
}

func instructionsRun(f *Factory, opts *InstructionsOptions) error {
	text := instructions[opts.Agent]
	if f.JSON {
		writeJSON(f.IO.Out, map[string]string{"agent": opts.Agent, "text": text})
		return nil
	}
	_, err := io.WriteString(f.IO.Out, text)
	return err
}

// instructions are the Markdown texts of party instructions, by agent.
var instructions = map[string]string{
	"claude": claudeInstructions + "\n" + pmInstructions,
	"codex":  codexInstructions + "\n" + pmInstructions,
	"pm":     pmInstructions,
}

// pmInstructions tell an agent the party pm commands.
const pmInstructions = "### Tasks: party pm\n\n" +
	"The team's tasks are kept by `party pm`; each change records your role as its actor.\n" +
	"- See them: `party pm task list [--assignee ROLE] [--status pending|in_progress|done]`, `party pm task show ID`.\n" +
	"- Plan: `party pm task add \"TITLE\" [--assignee ROLE] [--milestone ID]`, `party pm milestone add \"NAME\"`.\n" +
	"- Work: `party pm task update ID --status in_progress` when you start, `party pm task done ID` when it is done.\n" +
	"- Notes: `party pm doc ID --print` reads the task's document; `... | party pm doc ID --set -` writes it.\n"

const claudeInstructions = "## Working with party's review loop\n\n" +
	"You are the implementer. A reviewer agent reviews your work through party's\n" +
	"coordinator; the verdicts are yours alone.\n\n" +
	"### Coordinator messages\n\n" +
	"- A message that starts with `[COORDINATOR]` comes from party's coordinator,\n" +
	"  not from the user. Do not answer it as if the user had written it.\n" +
	"- `[COORDINATOR] <type> result ready. Read: <path>` means: read that file now.\n" +
	"  It holds review findings, an answer to your question, or a notice.\n\n" +
	"### Before asking for a review\n\n" +
	"- Run the code-critic and minimizer sub-agents. When they approve, record it:\n" +
	"  `party evidence add critic` and `party evidence add minimizer`.\n" +
	"- Then run `party review request` (optionally `--title \"...\"`).\n" +
	"- For planning questions to another agent use `party ask ROLE \"QUESTION\"`.\n\n" +
	"### Deciding after the findings\n\n" +
	"Read the findings file, then give exactly one verdict:\n\n" +
	"- Blocking findings: fix them, then `party review re-review \"<what you changed>\"`.\n" +
	"- Only non-blocking findings: `party review approve`, and note the ones you leave.\n" +
	"  Approval is of the code that was reviewed: if you edit code to fix them, that\n" +
	"  is a re-review (`fix:`), and approve is refused until the new review ran.\n" +
	"- A finding you dispute: explain why in the re-review reason, or stop with\n" +
	"  `party review needs-discussion \"<reason>\"` so the user decides.\n\n" +
	"Approve only when no blocking finding is left.\n\n" +
	"### Re-review tiers\n\n" +
	"Say in the re-review reason which tier the change is; the reviewer reads it.\n\n" +
	"1. **Fix**: a few lines that address the findings and nothing else. Reason:\n" +
	"   `fix: F1, F3 addressed in cache.go`. The reviewer checks the previous findings.\n" +
	"2. **Rework**: the design, an interface or several files changed. Reason:\n" +
	"   `rework: <what changed>`. The reviewer reviews the whole diff again.\n" +
	"3. **Dispute**: you disagree with a blocking finding. Reason:\n" +
	"   `dispute: F2, because <why>`. A second dispute of the same finding goes to\n" +
	"   `party review needs-discussion` instead.\n\n" +
	"Any code edit after approval makes the evidence stale, and a new review is needed.\n\n" +
	"### Iteration cap\n\n" +
	"After `review.maxIterations` reviews (default 3) the loop moves to\n" +
	"NEEDS_DISCUSSION. Only `party review resume` leaves it; wait for the user.\n\n" +
	"### Evidence before a pull request\n\n" +
	"Record `party evidence add tests-passed`, `checks-passed`, `security-scanned`\n" +
	"and `pr-verified` when each step has really passed. Any code edit makes all\n" +
	"evidence stale: run the steps again and record them again.\n" +
	"`party evidence list` shows what is fresh, stale or missing.\n"

const codexInstructions = "## Reviewing in party's review loop\n\n" +
	"You are the reviewer. You report findings; you never decide verdicts. The\n" +
	"implementer reads your findings and decides.\n\n" +
	"### Review requests\n\n" +
	"- `[COORDINATOR] review request N. Read: <path>` points to a prompt file. It\n" +
	"  says where the diff is and where to write your findings.\n" +
	"- Review the diff and the new files the prompt names, then write the\n" +
	"  findings file atomically: write a temporary file next to it, then rename\n" +
	"  it into place. Write nothing else there.\n" +
	"- From iteration 2 on, the prompt names your previous findings: check\n" +
	"  whether each was addressed, and report again what is still open.\n" +
	"- The implementer's note says the tier of the change: `fix:` (check the\n" +
	"  previous findings and the lines that changed), `rework:` (review the whole\n" +
	"  diff again) or `dispute:` (weigh the argument; keep the finding blocking\n" +
	"  only if it still holds, and say why in its description).\n\n" +
	"### Findings format\n\n" +
	"Write exactly this JSON schema, with no verdict field:\n\n" +
	"```json\n" + review.FindingsSchema + "\n```\n\n" +
	"- `severity` is `blocking` or `non-blocking`.\n" +
	"- `category` is one of `correctness`, `security`, `performance`, `style`,\n" +
	"  `tests`, `docs`.\n" +
	"- Use `\"findings\": []` when you found nothing; keep `stats` in line with the list.\n\n" +
	"### Questions\n\n" +
	"`[COORDINATOR] question N from ROLE. Read: <path>` is a question from another\n" +
	"agent. Write your answer in the file the question names, again as a temporary\n" +
	"file renamed into place.\n"
