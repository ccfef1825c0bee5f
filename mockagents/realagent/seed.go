package realagent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// SeedOptions say whom Seed seeds, where, and for which fake model.
type SeedOptions struct {
	Kind     string // claude, codex or gemini
	Home     string // the agent's HOME: a directory the test owns
	ModelURL string // the fake model's base URL, http://127.0.0.1:PORT
	WorkDir  string // the directory the agent runs in; Seed trusts it
	// Trust are more directories Seed trusts (a repository whose linked
	// worktrees codex runs in: it asks about the repository's root).
	Trust []string
}

// The fake credentials. Any string works against the fake model; Claude
// Code approves a custom key by its last 20 characters.
const (
	claudeKey = "sk-ant-api03-party-fake-model-key-0123456789abcdef"
	// CodexKeyVar is the variable config.toml's env_key names.
	CodexKeyVar = "FAKEMODEL_API_KEY"
	codexKey    = "party-fake-model-key"
	geminiKey   = "party-fake-model-key"
	// codexModel is the model config.toml asks for; the fake model
	// answers any name.
	codexModel = "x"
)

// Seed writes into o.Home the files that let the agent o.Kind start
// offline against the fake model at o.ModelURL in o.WorkDir with no
// dialog (onboarding, custom API key, trust, auth method, update checks),
// and returns the environment the agent needs besides HOME, as KEY=VALUE.
// Files Seed writes as JSON are merged with what is there, so one HOME
// holds all three agents; Codex's config.toml is Seed's alone.
//
//   - claude: $HOME/.claude.json (hasCompletedOnboarding, the key's
//     approval, the trusted project); env ANTHROPIC_BASE_URL,
//     ANTHROPIC_API_KEY and the switches that stop non-essential
//     traffic, auto-update, telemetry and error reports.
//   - codex: $HOME/.codex/config.toml (provider "fake" on
//     ModelURL/v1 with the responses wire API, no update check, no
//     analytics or feedback, the trusted project); env CODEX_HOME and
//     CodexKeyVar.
//   - gemini: $HOME/.gemini/settings.json (API-key auth, no auto-update
//     or its notice, no usage statistics, telemetry or IDE) and
//     $HOME/.gemini/trustedFolders.json; env GEMINI_API_KEY,
//     GOOGLE_GEMINI_BASE_URL, GEMINI_TELEMETRY_ENABLED=false,
//     NO_BROWSER=true.
func Seed(o SeedOptions) ([]string, error) {
	if o.Home == "" || o.ModelURL == "" || o.WorkDir == "" {
		return nil, errors.New("realagent: Seed needs Home, ModelURL and WorkDir")
	}
	dirs, err := workDirs(o.WorkDir)
	if err != nil {
		return nil, err
	}
	for _, d := range o.Trust {
		more, err := workDirs(d)
		if err != nil {
			return nil, err
		}
		dirs = append(dirs, more...)
	}
	url := strings.TrimRight(o.ModelURL, "/")
	switch o.Kind {
	case Claude:
		return seedClaude(o.Home, url, dirs)
	case Codex:
		return seedCodex(o.Home, url, dirs)
	case Gemini:
		return seedGemini(o.Home, url, dirs)
	}
	return nil, fmt.Errorf("%w %q (want claude, codex or gemini)", ErrUnknownKind, o.Kind)
}

// workDirs returns dir made absolute, and its real path when that
// differs: Claude keys projects by the real path, the others by what
// they were started in.
func workDirs(dir string) ([]string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("realagent: work dir: %w", err)
	}
	if real == abs {
		return []string{abs}, nil
	}
	return []string{real, abs}, nil
}

func seedClaude(home, url string, dirs []string) ([]string, error) {
	path := filepath.Join(home, ".claude.json")
	err := updateJSON(path, func(cfg map[string]any) {
		cfg["hasCompletedOnboarding"] = true
		cfg["customApiKeyResponses"] = map[string]any{
			"approved": []string{claudeKey[len(claudeKey)-20:]},
			"rejected": []string{},
		}
		projects := object(cfg, "projects")
		for _, d := range dirs {
			object(projects, d)["hasTrustDialogAccepted"] = true
		}
	})
	if err != nil {
		return nil, err
	}
	return []string{
		"ANTHROPIC_BASE_URL=" + url,
		"ANTHROPIC_API_KEY=" + claudeKey,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
	}, nil
}

func seedCodex(home, url string, dirs []string) ([]string, error) {
	codexHome := filepath.Join(home, ".codex")
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("# Written by party's realagent.Seed: Codex offline against a fake model.\n")
	fmt.Fprintf(&b, "model = %s\n", tomlString(codexModel))
	b.WriteString("model_provider = \"fake\"\n")
	b.WriteString("check_for_update_on_startup = false\n\n")
	b.WriteString("[model_providers.fake]\n")
	b.WriteString("name = \"fake\"\n")
	fmt.Fprintf(&b, "base_url = %s\n", tomlString(url+"/v1"))
	b.WriteString("wire_api = \"responses\"\n")
	fmt.Fprintf(&b, "env_key = %s\n\n", tomlString(CodexKeyVar))
	b.WriteString("[analytics]\nenabled = false\n\n")
	b.WriteString("[feedback]\nenabled = false\n")
	for _, d := range dirs {
		fmt.Fprintf(&b, "\n[projects.%s]\ntrust_level = \"trusted\"\n", tomlString(d))
	}
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(b.String()), 0o600); err != nil {
		return nil, err
	}
	return []string{
		"CODEX_HOME=" + codexHome,
		CodexKeyVar + "=" + codexKey,
	}, nil
}

func seedGemini(home, url string, dirs []string) ([]string, error) {
	dir := filepath.Join(home, ".gemini")
	err := updateJSON(filepath.Join(dir, "settings.json"), func(cfg map[string]any) {
		object(object(cfg, "security"), "auth")["selectedType"] = "gemini-api-key"
		general := object(cfg, "general")
		general["enableAutoUpdate"] = false
		general["enableAutoUpdateNotification"] = false
		object(cfg, "privacy")["usageStatisticsEnabled"] = false
		object(cfg, "telemetry")["enabled"] = false
		object(cfg, "ide")["enabled"] = false
	})
	if err != nil {
		return nil, err
	}
	err = updateJSON(filepath.Join(dir, "trustedFolders.json"), func(cfg map[string]any) {
		for _, d := range dirs {
			cfg[d] = "TRUST_FOLDER"
		}
	})
	if err != nil {
		return nil, err
	}
	return []string{
		"GEMINI_API_KEY=" + geminiKey,
		"GOOGLE_GEMINI_BASE_URL=" + url,
		"GEMINI_TELEMETRY_ENABLED=false",
		"NO_BROWSER=true",
	}, nil
}

// updateJSON reads the JSON object at path (an empty one when there is no
// file), lets edit change it, and writes it back, making its directory.
func updateJSON(path string, edit func(map[string]any)) error {
	cfg := map[string]any{}
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		if err := json.Unmarshal(b, &cfg); err != nil {
			return fmt.Errorf("realagent: %s: %w", path, err)
		}
	case !errors.Is(err, os.ErrNotExist):
		return err
	}
	edit(cfg)
	out, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, append(out, '\n'), 0o600)
}

// object returns m[key] as an object, replacing whatever else is there.
func object(m map[string]any, key string) map[string]any {
	if o, ok := m[key].(map[string]any); ok {
		return o
	}
	o := map[string]any{}
	m[key] = o
	return o
}

// tomlString quotes s as a TOML basic string: JSON's string escapes (\",
// \\, \n, \uXXXX, ...) are all valid TOML escapes.
func tomlString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}
