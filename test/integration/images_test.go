package integration

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
)

// buildImage builds testdata/images/NAME from its Dockerfile and files (context name -> host
// path), tagged awf-it/NAME:<hash of the context and args>. An image with that tag already on
// the engine is reused: the context is the same, so is the image. built reports whether this
// call built it.
func buildImage(ctx context.Context, name string, files map[string]string, args map[string]*string) (tag string, built bool, err error) {
	dir, err := os.MkdirTemp("", "awf-image-")
	if err != nil {
		return "", false, err
	}
	defer os.RemoveAll(dir)
	h := sha256.New()
	files["Dockerfile"] = filepath.Join(moduleRoot, "testdata", "images", name, "Dockerfile")
	for _, dst := range slices.Sorted(maps.Keys(files)) {
		data, err := os.ReadFile(files[dst])
		if err != nil {
			return "", false, fmt.Errorf("image %s: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), data, 0o755); err != nil {
			return "", false, err
		}
		fmt.Fprintf(h, "%s %d\n", dst, len(data))
		h.Write(data)
	}
	for _, k := range slices.Sorted(maps.Keys(args)) {
		fmt.Fprintf(h, "arg %s=%s\n", k, *args[k])
	}
	version := hex.EncodeToString(h.Sum(nil))[:16]
	tag = "awf-it/" + name + ":" + version
	if _, err := docker.ImageInspect(ctx, tag); err == nil {
		return tag, false, nil
	}
	provider, err := testcontainers.NewDockerProvider()
	if err != nil {
		return "", false, fmt.Errorf("testcontainers provider: %w", err)
	}
	defer provider.Close()
	var buildLog bytes.Buffer
	_, err = provider.BuildImage(ctx, &testcontainers.ContainerRequest{FromDockerfile: testcontainers.FromDockerfile{
		Context:        dir,
		Repo:           "awf-it/" + name,
		Tag:            version,
		BuildArgs:      args,
		KeepImage:      true,
		BuildLogWriter: &buildLog,
	}})
	if err != nil {
		return "", false, fmt.Errorf("build image %s: %w\n%s", tag, err, buildLog.String())
	}
	return tag, true, nil
}

func removeImage(tag string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := docker.ImageRemove(ctx, tag, client.ImageRemoveOptions{PruneChildren: true}); err != nil {
		fmt.Fprintf(os.Stderr, "integration: remove image %s: %v\n", tag, err)
	}
}

// runContainer starts a container of a locally built image with testcontainers and removes
// it when t ends. It refuses an image the engine does not have, so no test ever pulls.
func runContainer(t *testing.T, image string, opts ...testcontainers.ContainerCustomizer) *testcontainers.DockerContainer {
	t.Helper()
	if _, err := docker.ImageInspect(t.Context(), image); err != nil {
		if cerrdefs.IsNotFound(err) {
			t.Fatalf("image %s is not on the engine: the tests build every image and never pull", image)
		}
		t.Fatalf("inspect image %s: %v", image, err)
	}
	opts = append(opts, testcontainers.WithLogger(tclog.TestLogger(t)))
	c, err := testcontainers.Run(t.Context(), image, opts...)
	// Test containers hold no state worth a graceful stop, and a PID 1 without a SIGTERM
	// handler would keep Terminate waiting for the 10 s default.
	testcontainers.CleanupContainer(t, c, testcontainers.StopTimeout(0))
	if err != nil {
		t.Fatalf("run %s: %v", image, err)
	}
	return c
}

// output is what a container or an exec printed, stream by stream.
type output struct {
	stdout, stderr string
}

// logs returns the stdout and stderr of container id, demultiplexed.
func logs(t *testing.T, id string) output {
	t.Helper()
	rc, err := docker.ContainerLogs(t.Context(), id, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		t.Fatalf("logs of %s: %v", id, err)
	}
	defer rc.Close()
	return demux(t, rc)
}

func demux(t *testing.T, r io.Reader) output {
	t.Helper()
	var stdout, stderr strings.Builder
	if _, err := stdcopy.StdCopy(&stdout, &stderr, r); err != nil {
		t.Fatalf("demultiplex output: %v", err)
	}
	return output{stdout.String(), stderr.String()}
}
