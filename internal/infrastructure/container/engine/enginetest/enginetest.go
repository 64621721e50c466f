// Package enginetest helps tests stand in for the Docker engine: an in-process Engine API
// server on a unix socket, the hijacked connection of an attach, and the frames of its
// multiplexed stream. Tests only; awf itself never imports it.
package enginetest

import (
	"encoding/binary"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

// Serve runs h as a Docker engine listening on a unix socket in a temporary directory until
// the test ends, and returns its address for engine.Options.Host ("unix:///.../docker.sock").
func Serve(t testing.TB, h http.Handler) string {
	t.Helper()
	// A socket path must fit in 108 bytes: t.TempDir() holds the test's name, which may not.
	dir, err := os.MkdirTemp("", "engine")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "docker.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatalf("listen on %s: %v", sock, err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return "unix://" + sock
}

// Upgrade answers an attach request as the engine does, 101 Switching Protocols with the
// multiplexed stream's content type, and returns the connection, which the caller writes the
// stream to and closes. It fails the test if w cannot be hijacked.
func Upgrade(t testing.TB, w http.ResponseWriter) net.Conn {
	t.Helper()
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return nil
	}
	buf.WriteString("HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.multiplexed-stream\r\n" +
		"Connection: Upgrade\r\nUpgrade: tcp\r\n\r\n")
	if err := buf.Flush(); err != nil {
		t.Errorf("write the upgrade: %v", err)
	}
	return conn
}

// Stream numbers of Frame.
const (
	Stdout    byte = 1
	Stderr    byte = 2
	SystemErr byte = 3
)

// Frame is one frame of a multiplexed stream: the 8-byte header and the payload.
func Frame(stream byte, payload string) []byte {
	hdr := []byte{stream, 0, 0, 0, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(hdr[4:], uint32(len(payload)))
	return append(hdr, payload...)
}
