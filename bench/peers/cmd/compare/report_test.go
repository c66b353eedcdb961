package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeReport replaces only what follows the marker line, writes a new
// file whole, and leaves a file without the marker as it was.
// (-o ../RESULTS.md, as the report's own header says to run it, wrote the
// file whole and lost its hand-written figures.)
func TestWriteReport_keepsWhatPrecedesTheMarker(t *testing.T) {
	dir := t.TempDir()
	results := filepath.Join(dir, "RESULTS.md")
	top := "# results\n\nhand-written figures\n\n" + generatedMarker + " from the next heading. -->\n"
	if err := os.WriteFile(results, []byte(top+"\n# old report\nold rows\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeReport(results, "# new report\nnew rows\n"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(results)
	if want := top + "\n# new report\nnew rows\n"; string(got) != want {
		t.Errorf("spliced file:\n%s\nwant:\n%s", got, want)
	}

	fresh := filepath.Join(dir, "new.md")
	if err := writeReport(fresh, "# report\n"); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(fresh); string(got) != "# report\n" {
		t.Errorf("new file: %q", got)
	}

	other := filepath.Join(dir, "notes.md")
	if err := os.WriteFile(other, []byte("notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := writeReport(other, "# report\n")
	if err == nil || !strings.Contains(err.Error(), "not overwritten") {
		t.Errorf("a file without the marker: err %v, want a refusal", err)
	}
	if got, _ := os.ReadFile(other); string(got) != "notes\n" {
		t.Errorf("a file without the marker was changed: %q", got)
	}
}
