// Package integration tests awf against a real Docker engine with testcontainers-go: the
// http_request tool across a Docker network and its DNS, the awf binary in a minimal container
// run the way a CI job runs it, and the container sandbox backend. Nothing is pulled: every
// image is built here from testdata/images on scratch, with Debian's static busybox
// (busybox-static) and static Go binaries built by TestMain.
//
// The tests skip, saying why, under -short and when no Docker engine answers or busybox is
// missing; with AWF_INTEGRATION=require they fail instead, so that CI cannot skip them by
// accident.
package integration

import (
	"context"
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"
	tclog "github.com/testcontainers/testcontainers-go/log"

	"github.com/awf-dev/awf/internal/infrastructure/process"
)

// Set by TestMain.
var (
	// skipReason is why the tests cannot run here; "" when they can.
	skipReason string
	// docker is a client of the engine the tests use, for what testcontainers does not wrap.
	docker *client.Client
	// bin holds the static binaries built for the images: awf, httpserver, httpfetch and
	// helpershim.
	bin string
	// helperPath is the static helper the container backend binds into its containers: awf
	// itself once its main dispatches process.FileHelperMain, else helpershim.
	helperPath string
	// The images built from testdata/images, by local tag.
	busyboxImage, awfImage, netImage string
)

// moduleRoot is the repository root, from this package's directory.
const moduleRoot = "../.."

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	flag.Parse()
	// No reaper: it is an image from a registry, and there is none. Tests clean up after
	// themselves with t.Cleanup.
	os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	tclog.SetDefault(tclog.NewNoopLogger())
	if reason := unavailable(); reason != "" {
		if os.Getenv("AWF_INTEGRATION") == "require" {
			fmt.Fprintf(os.Stderr, "integration: AWF_INTEGRATION=require, but %s\n", reason)
			return 1
		}
		skipReason = reason
		fmt.Fprintf(os.Stderr, "integration: skipping: %s\n", reason)
		return m.Run()
	}
	defer docker.Close()
	start := time.Now()
	cleanup, err := setUp()
	defer cleanup()
	if err != nil {
		fmt.Fprintf(os.Stderr, "integration: set up: %v\n", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "integration: binaries and images ready in %s\n", time.Since(start).Round(time.Millisecond))
	return m.Run()
}

// unavailable says why the tests cannot run on this machine, or "".
func unavailable() string {
	if testing.Short() {
		return "-short: these tests start Docker containers"
	}
	cli, err := client.New(client.FromEnv)
	if err != nil {
		return fmt.Sprintf("no Docker client: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := cli.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		cli.Close()
		return fmt.Sprintf("no Docker engine answers (%v); start one or set DOCKER_HOST", err)
	}
	if _, err := busyboxPath(); err != nil {
		cli.Close()
		return err.Error()
	}
	docker = cli
	return ""
}

// busyboxPath finds a static busybox for the images' root file system.
func busyboxPath() (string, error) {
	for _, p := range []string{"/bin/busybox", "/usr/bin/busybox"} {
		f, err := elf.Open(p)
		if err != nil {
			continue
		}
		defer f.Close()
		for _, prog := range f.Progs {
			if prog.Type == elf.PT_INTERP {
				return "", fmt.Errorf("%s is dynamically linked; install Debian's busybox-static", p)
			}
		}
		return p, nil
	}
	return "", errors.New("no busybox: install Debian's busybox-static (apt-get install -y busybox-static)")
}

// setUp builds the static binaries and the images. The cleanup it returns removes what it
// made, except the busybox base image, which later runs reuse.
func setUp() (cleanup func(), err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var undo []func()
	cleanup = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	if bin, err = os.MkdirTemp("", "awf-integration-"); err != nil {
		return cleanup, err
	}
	undo = append(undo, func() { os.RemoveAll(bin) })
	if err := buildBinaries(ctx, bin); err != nil {
		return cleanup, err
	}
	helperPath = filepath.Join(bin, "awf")
	if !dispatchesFileHelper(helperPath) {
		fmt.Fprintf(os.Stderr, "integration: awf does not dispatch %s yet (cmd/awf/main.go); the container backend tests use helpershim\n", process.FileHelperArg)
		helperPath = filepath.Join(bin, "helpershim")
	}
	busybox, _ := busyboxPath()
	if busyboxImage, _, err = buildImage(ctx, "busybox", map[string]string{"busybox": busybox}, nil); err != nil {
		return cleanup, err
	}
	base := map[string]*string{"BASE": &busyboxImage}
	images := []struct {
		name  string
		tag   *string
		files map[string]string
	}{
		{"awf", &awfImage, map[string]string{"awf": filepath.Join(bin, "awf")}},
		{"net", &netImage, map[string]string{"httpserver": filepath.Join(bin, "httpserver"), "httpfetch": filepath.Join(bin, "httpfetch")}},
	}
	built := make([]bool, len(images))
	errs := make([]error, len(images))
	var wg sync.WaitGroup
	for i, img := range images {
		wg.Go(func() { *img.tag, built[i], errs[i] = buildImage(ctx, img.name, img.files, base) })
	}
	wg.Wait()
	for i, img := range images {
		if built[i] {
			undo = append(undo, func() { removeImage(*img.tag) })
		}
	}
	if err := errors.Join(errs...); err != nil {
		return cleanup, err
	}
	return cleanup, nil
}

// buildBinaries builds every binary the images need in one go build: static (CGO_ENABLED=0),
// so that they run on scratch.
func buildBinaries(ctx context.Context, dir string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", dir+string(filepath.Separator),
		"./cmd/awf", "./test/integration/internal/httpserver", "./test/integration/internal/httpfetch",
		"./test/integration/internal/helpershim")
	cmd.Dir = moduleRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go build: %v\n%s", err, out)
	}
	return nil
}

// dispatchesFileHelper reports whether awf's main runs the file entry of the process helper:
// called with no files, the entry prints its usage and exits 125; the CLI would say "unknown
// command".
func dispatchesFileHelper(awf string) bool {
	out, err := exec.Command(awf, process.FileHelperArg).CombinedOutput()
	var ee *exec.ExitError
	return errors.As(err, &ee) && ee.ExitCode() == 125 && strings.Contains(string(out), "usage: "+process.FileHelperArg)
}

// requireDocker skips t when the integration tests cannot run here.
func requireDocker(t *testing.T) {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
}
