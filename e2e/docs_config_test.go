// The configuration examples in README.md and documentation.md are what users copy: every
// ```yaml block there that configures receivers must pass the ocb-built collector's own
// `validate` command as written (a block that is only a receiver fragment gets a debug
// exporter and a pipeline around it, nothing else). `make test-docs` builds the
// distribution and sets GHOSTDRIVER_DIST.
package e2e

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// docBlock is one fenced ```yaml block of a Markdown file.
type docBlock struct {
	file string
	line int // of the opening fence
	text string
}

// yamlBlocks returns every ```yaml block of a Markdown file, in order. An unterminated
// fence is an error: the rest of the file would silently not be checked.
func yamlBlocks(path string) ([]docBlock, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []docBlock
	var cur *docBlock
	var b strings.Builder
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		l := sc.Text()
		t := strings.TrimSpace(l)
		switch {
		case cur == nil && (t == "```yaml" || t == "```yml"):
			cur = &docBlock{file: filepath.Base(path), line: n}
			b.Reset()
		case cur != nil && t == "```":
			cur.text = b.String()
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: ```yaml block never closed", path, cur.line)
	}
	return out, nil
}

// collectorConfig turns a documentation block that configures receivers into a whole
// collector configuration: what the block says is kept as written; only what a
// fragment leaves out (exporters, the service's pipelines) is added. It reports false for
// blocks that configure no receiver.
func collectorConfig(block string) ([]byte, bool, error) {
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(block), &doc); err != nil {
		return nil, false, fmt.Errorf("not YAML: %w", err)
	}
	recv, ok := doc["receivers"].(map[string]any)
	if !ok {
		return nil, false, nil
	}
	var names []string
	for name := range recv {
		names = append(names, name)
	}
	sort.Strings(names)
	if _, ok := doc["exporters"]; !ok {
		doc["exporters"] = map[string]any{"debug": map[string]any{}}
	}
	if _, ok := doc["service"]; !ok {
		var exporters []string
		for name := range doc["exporters"].(map[string]any) {
			exporters = append(exporters, name)
		}
		sort.Strings(exporters)
		doc["service"] = map[string]any{"pipelines": map[string]any{
			"traces":  map[string]any{"receivers": names, "exporters": exporters},
			"metrics": map[string]any{"receivers": names, "exporters": exporters},
		}}
	}
	out, err := yaml.Marshal(doc)
	return out, true, err
}

func TestDocsConfigBlocksValidate(t *testing.T) {
	bin := distBinary(t)
	dir := t.TempDir()
	checked := map[string]int{}
	for _, md := range []string{"README.md", "documentation.md"} {
		blocks, err := yamlBlocks(filepath.Join("..", md))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range blocks {
			where := fmt.Sprintf("%s:%d", b.file, b.line)
			cfg, ok, err := collectorConfig(b.text)
			if err != nil {
				t.Errorf("%s: %v", where, err)
				continue
			}
			if !ok {
				continue
			}
			checked[md]++
			path := filepath.Join(dir, fmt.Sprintf("%s-%d.yaml", b.file, b.line))
			if err := os.WriteFile(path, cfg, 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(bin, "validate", "--config="+path).CombinedOutput()
			if err != nil {
				t.Errorf("%s: the ```yaml block starting here does not pass `%s validate`: %v\n%s\nblock as checked:\n%s",
					where, filepath.Base(bin), err, out, cfg)
				continue
			}
			t.Logf("%s: valid", where)
		}
	}
	// The files do hold receiver configuration: finding none means the extraction broke,
	// not that everything is valid.
	for _, md := range []string{"README.md", "documentation.md"} {
		if checked[md] == 0 {
			t.Errorf("%s: no ```yaml block with receivers found (the README's configuration section is one)", md)
		}
	}
}
