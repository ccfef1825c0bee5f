package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/party"
)

// HooksInstallOptions are the inputs of party hooks install.
type HooksInstallOptions struct {
	User    bool // ~/.claude/settings.json
	Project bool // ./.claude/settings.json, the default
	DryRun  bool
}

func newHooksCmd(f *Factory, runF func(context.Context, *HooksInstallOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hooks",
		Short: "Install party's hooks in Claude Code's settings",
		Args:  argsBetween(0, 0),
	}
	opts := &HooksInstallOptions{}
	install := &cobra.Command{
		Use:   "install [--user|--project] [--dry-run]",
		Short: "Add party's hooks to a Claude Code settings.json",
		Long: `Merge party's hooks (PreToolUse Bash, PostToolUse *, SessionStart, each
running "PARTY hook claude") into Claude Code's settings.json, keeping every
other setting and hook; running it again changes nothing. --project (the
default) writes ./.claude/settings.json, --user ~/.claude/settings.json. An
existing file is first copied to settings.json.bak-TIMESTAMP; a file that is
not valid JSON is left alone.`,
		Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			if opts.User && opts.Project {
				return fmt.Errorf("%w: --user and --project cannot be used together", party.ErrUsage)
			}
			return run(c, f, opts, runF, hooksInstallRun)
		},
	}
	fl := install.Flags()
	fl.BoolVar(&opts.User, "user", false, "write ~/.claude/settings.json")
	fl.BoolVar(&opts.Project, "project", false, "write ./.claude/settings.json (default)")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "print the merged settings and write nothing")
	cmd.AddCommand(install)
	return cmd
}

func hooksInstallRun(_ context.Context, f *Factory, opts *HooksInstallOptions) error {
	res, err := party.InstallHooks(f.env(), opts.User, opts.DryRun)
	if err != nil {
		return err
	}
	if !res.DryRun && !res.Changed {
		fmt.Fprintf(f.IO.ErrOut, "party: hooks already installed in %s; nothing changed\n", res.Path)
	}
	switch {
	case f.JSON:
		writeJSON(f.IO.Out, res)
	case res.DryRun:
		_, _ = f.IO.Out.Write(res.Settings)
		fmt.Fprintf(f.IO.ErrOut, "party: dry run: %s not written\n", res.Path)
	case !res.Changed:
	case res.Backup != "":
		fmt.Fprintf(f.IO.Out, "installed party hooks in %s (backup: %s)\n", res.Path, res.Backup)
	default:
		fmt.Fprintf(f.IO.Out, "installed party hooks in %s\n", res.Path)
	}
	return nil
}
