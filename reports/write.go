package reports

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
)

// Write writes report.json, report.md and report.html into dir, each
// through a temporary file and a rename: a reader never sees half a file.
func Write(dir string, r *Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	j, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	var md, html bytes.Buffer
	if err := r.Markdown(&md); err != nil {
		return err
	}
	if err := r.HTML(&html); err != nil {
		return err
	}
	for name, data := range map[string][]byte{"report.json": append(j, '\n'), "report.md": md.Bytes(), "report.html": html.Bytes()} {
		if err := WriteFile(filepath.Join(dir, name), data); err != nil {
			return err
		}
	}
	return nil
}

// WriteFile writes data to path through a temporary file and a rename.
func WriteFile(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".outboxcheck-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
