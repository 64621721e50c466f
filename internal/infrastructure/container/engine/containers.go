package engine

import (
	"context"
	"errors"
	"net/http"
	"net/url"
)

// CreateRequest is the body of POST /containers/create: the container's configuration and its
// host configuration, with the fields the backend sets.
type CreateRequest struct {
	Image string `json:"Image"`
	// Entrypoint and Cmd are sent even when empty: an empty Cmd next to an Entrypoint keeps the
	// image's CMD out.
	Entrypoint []string          `json:"Entrypoint"`
	Cmd        []string          `json:"Cmd"`
	Env        []string          `json:"Env,omitempty"`
	WorkingDir string            `json:"WorkingDir,omitempty"`
	User       string            `json:"User,omitempty"`
	Hostname   string            `json:"Hostname,omitempty"`
	Labels     map[string]string `json:"Labels,omitempty"`
	HostConfig HostConfig        `json:"HostConfig"`
}

// HostConfig is how the engine sets up the container on the host.
type HostConfig struct {
	// NetworkMode is "none" or the name of a network to join.
	NetworkMode string  `json:"NetworkMode,omitempty"`
	Mounts      []Mount `json:"Mounts,omitempty"`
	Resources
	CapDrop        []string `json:"CapDrop,omitempty"`
	SecurityOpt    []string `json:"SecurityOpt,omitempty"`
	ReadonlyRootfs bool     `json:"ReadonlyRootfs,omitempty"`
	// Init runs an init process as PID 1; nil leaves the engine's default.
	Init    *bool  `json:"Init,omitempty"`
	IpcMode string `json:"IpcMode,omitempty"`
	// LogConfig.Type "none" keeps the engine from storing the output.
	LogConfig *LogConfig `json:"LogConfig,omitempty"`
}

// Resources are the container's cgroup limits and rlimits; zero means none.
type Resources struct {
	Memory int64 `json:"Memory,omitempty"`
	// MemorySwap is memory plus swap: equal to Memory, no swap.
	MemorySwap int64 `json:"MemorySwap,omitempty"`
	// NanoCPUs is the CPU quota in billionths of a CPU.
	NanoCPUs  int64    `json:"NanoCpus,omitempty"`
	PidsLimit *int64   `json:"PidsLimit,omitempty"`
	Ulimits   []Ulimit `json:"Ulimits,omitempty"`
}

// Ulimit is one rlimit of the container's processes, by its name without RLIMIT_ ("fsize").
type Ulimit struct {
	Name string `json:"Name"`
	Soft int64  `json:"Soft"`
	Hard int64  `json:"Hard"`
}

// LogConfig picks the engine's log driver for the container.
type LogConfig struct {
	Type string `json:"Type"`
}

// Mount types and bind propagations of Mount.
const (
	MountBind           = "bind"
	MountTmpfs          = "tmpfs"
	PropagationRPrivate = "rprivate"
)

// Mount is one mount of the container: a host path bound in (MountBind) or a tmpfs.
type Mount struct {
	Type         string        `json:"Type"`
	Source       string        `json:"Source,omitempty"`
	Target       string        `json:"Target"`
	ReadOnly     bool          `json:"ReadOnly,omitempty"`
	BindOptions  *BindOptions  `json:"BindOptions,omitempty"`
	TmpfsOptions *TmpfsOptions `json:"TmpfsOptions,omitempty"`
}

// BindOptions tune a bind mount.
type BindOptions struct {
	// Propagation is how mounts below the source propagate: PropagationRPrivate, none.
	Propagation string `json:"Propagation,omitempty"`
}

// TmpfsOptions size a tmpfs and set its permissions.
type TmpfsOptions struct {
	SizeBytes int64 `json:"SizeBytes,omitempty"`
	// Mode is the permission bits of the tmpfs's root, as chmod reads them (0o1777).
	Mode uint32 `json:"Mode,omitempty"`
}

// ContainerInfo is what the backend reads of a container's inspection.
type ContainerInfo struct {
	ID    string          `json:"Id"`
	State *ContainerState `json:"State"`
}

// ContainerState is the state of a container's main process.
type ContainerState struct {
	Status  string `json:"Status"`
	Running bool   `json:"Running"`
	// OOMKilled is set when the kernel killed a process of the container for memory.
	OOMKilled bool `json:"OOMKilled"`
	ExitCode  int  `json:"ExitCode"`
}

// ImageInfo is what the backend reads of an image's inspection.
type ImageInfo struct {
	ID string `json:"Id"`
}

// WaitNotRunning is the wait condition of a container that has stopped, or never started.
const WaitNotRunning = "not-running"

// WaitResult is the end of a container: its exit status, and the engine's error if it could
// not wait.
type WaitResult struct {
	StatusCode int `json:"StatusCode"`
	Error      *struct {
		Message string `json:"Message"`
	} `json:"Error"`
}

// errNoID refuses a request about a container or image without a name: its path would name
// another endpoint.
var errNoID = errors.New("no container or image name")

// InspectImage returns what the engine knows of image ref (a name or an ID); an image it does
// not have is an error matching ErrNotFound.
func (c *Client) InspectImage(ctx context.Context, ref string) (ImageInfo, error) {
	var info ImageInfo
	if ref == "" {
		return info, errNoID
	}
	err := c.call(ctx, "inspect image "+ref, http.MethodGet, "/images/"+ref+"/json", nil, nil, &info)
	return info, err
}

// CreateContainer creates a container and returns its ID. It does not start it, and it never
// pulls the image: a missing image (or network) is an error matching ErrNotFound.
func (c *Client) CreateContainer(ctx context.Context, req CreateRequest) (string, error) {
	var created struct {
		ID string `json:"Id"`
	}
	if err := c.call(ctx, "create container", http.MethodPost, "/containers/create", nil, req, &created); err != nil {
		return "", err
	}
	return created.ID, nil
}

// StartContainer starts container id. Starting one that already runs is not an error.
func (c *Client) StartContainer(ctx context.Context, id string) error {
	if id == "" {
		return errNoID
	}
	return c.call(ctx, "start container "+id, http.MethodPost, "/containers/"+id+"/start", nil, nil, nil)
}

// WaitContainer waits until container id meets condition (WaitNotRunning) and returns how it
// ended. It returns when ctx ends, with ctx's error.
func (c *Client) WaitContainer(ctx context.Context, id, condition string) (WaitResult, error) {
	var res WaitResult
	if id == "" {
		return res, errNoID
	}
	err := c.call(ctx, "wait for container "+id, http.MethodPost, "/containers/"+id+"/wait",
		url.Values{"condition": {condition}}, nil, &res)
	return res, err
}

// KillContainer sends signal ("KILL") to the main process of container id. A container that
// is not running gives an error matching ErrConflict.
func (c *Client) KillContainer(ctx context.Context, id, signal string) error {
	if id == "" {
		return errNoID
	}
	return c.call(ctx, "kill container "+id, http.MethodPost, "/containers/"+id+"/kill",
		url.Values{"signal": {signal}}, nil, nil)
}

// InspectContainer returns the state of container id.
func (c *Client) InspectContainer(ctx context.Context, id string) (ContainerInfo, error) {
	var info ContainerInfo
	if id == "" {
		return info, errNoID
	}
	err := c.call(ctx, "inspect container "+id, http.MethodGet, "/containers/"+id+"/json", nil, nil, &info)
	return info, err
}

// RemoveContainer removes container id and its anonymous volumes, killing it first if it
// still runs. One already gone gives an error matching ErrNotFound.
func (c *Client) RemoveContainer(ctx context.Context, id string) error {
	if id == "" {
		return errNoID
	}
	return c.call(ctx, "remove container "+id, http.MethodDelete, "/containers/"+id,
		url.Values{"force": {"1"}, "v": {"1"}}, nil, nil)
}
