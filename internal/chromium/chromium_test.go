package chromium

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fakeBrowser writes a "chromium" that dies by SIGSEGV the first crashes
// times it starts, then prints a page.
func fakeBrowser(t *testing.T, crashes int) string {
	dir := t.TempDir()
	script := `#!/bin/sh
n=$(cat "` + dir + `/starts" 2>/dev/null || echo 0)
n=$((n+1)); echo $n > "` + dir + `/starts"
if [ $n -le ` + strconv.Itoa(crashes) + ` ]; then kill -SEGV $$; fi
echo '<html><body>page</body></html>'
`
	bin := filepath.Join(dir, "chromium")
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

func TestACrashedBrowserIsStartedAgain(t *testing.T) {
	out, errs, err := attempts(fakeBrowser(t, 2), t.TempDir, nil)
	if err != nil || !strings.Contains(out, "page") {
		t.Fatalf("out %q, err %v; want the page after two crashes", out, err)
	}
	if strings.Count(errs, "chromium died") != 2 {
		t.Fatalf("stderr %q; want both crashes told", errs)
	}
}

func TestABrowserThatKeepsCrashingFails(t *testing.T) {
	_, _, err := attempts(fakeBrowser(t, 3), t.TempDir, nil)
	if err == nil || !strings.Contains(err.Error(), "segmentation fault (attempt 3)") {
		t.Fatalf("err %v; want the third crash", err)
	}
}

func TestAFailingExitIsNotRetried(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "chromium")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nexit 2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, _, err := attempts(bin, t.TempDir, nil)
	if err == nil || !strings.Contains(err.Error(), "(attempt 1)") {
		t.Fatalf("err %v; want the exit at the first attempt", err)
	}
}
