package browser

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Chromium's file view. The browser runs as the agent's user, and so could read what the agent
// can: the region's NATS credentials, the agent's TLS key, a service-account token, the files
// of whoever runs it. The scheme guard keeps every page off file: URLs; this is the second,
// operating-system layer beneath it. Chromium is started under a Landlock ruleset (Linux 5.13
// and later, unprivileged) that lets it read only what a browser needs — its program and the
// system's libraries, fonts and certificates, a few files of /etc, /proc and /sys — and write
// only its own profile directory and /dev. Nothing else of the file system exists for it,
// whatever it is asked to load. Its environment is its own too (browserEnv): none of the
// agent's variables, which hold its token and the NATS password, reach it.
//
// The agent's own /proc entries (its environment, memory and open files) are closed to the
// processes it starts by making it non-dumpable (Browser.Start).

// fileView is what Chromium may reach, besides its profile directory and its program's
// directory: read-only system paths, and read-write /dev (null, urandom, shared memory).
var (
	readOnly = []string{
		"/usr", "/lib", "/lib64", "/bin", "/sbin",
		"/etc/fonts", "/etc/ssl", "/etc/ca-certificates", "/etc/hosts", "/etc/resolv.conf",
		"/etc/nsswitch.conf", "/etc/host.conf", "/etc/gai.conf", "/etc/localtime", "/etc/ld.so.cache",
		"/var/cache/fontconfig", "/proc", "/sys",
	}
	readWrite = []string{"/dev"}
)

// errNoLandlock means the kernel cannot confine the browser (no Landlock).
var errNoLandlock = errors.New("no Landlock here (it needs Linux 5.13+ with the landlock LSM enabled, and a seccomp profile that allows it)")

// Landlock access rights, by the ABI version that brought them.
const (
	fsRightsV1 = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	readRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	// fileRights are the rights that apply to a file (the others only to directories).
	fileRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
)

// handledRights are the file-system rights the kernel's Landlock ABI knows: all of them are
// denied but where a rule grants them.
func handledRights() (uint64, error) {
	abi, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		// Not built in, not enabled, or denied by the container's seccomp profile.
		if errno == unix.ENOSYS || errno == unix.EOPNOTSUPP || errno == unix.EPERM {
			return 0, errNoLandlock
		}
		return 0, fmt.Errorf("landlock ABI version: %w", errno)
	}
	rights := uint64(fsRightsV1)
	if abi >= 2 {
		rights |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		rights |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		rights |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	return rights, nil
}

// confine restricts the calling thread, and every process it starts from now on, to Chromium's
// file view: readOnly, readWrite, and the extra read-write and read-only directories. The
// thread must be locked (runtime.LockOSThread) and never run another goroutine: the
// restriction cannot be lifted.
func confine(rw, ro []string) error {
	handled, err := handledRights()
	if err != nil {
		return err
	}
	attr := unix.LandlockRulesetAttr{Handled_access_fs: handled}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0) //nolint:gosec // the kernel's struct, as x/sys/unix declares it
	if errno != 0 {
		return fmt.Errorf("create the browser's landlock ruleset: %w", errno)
	}
	ruleset := int(fd)
	defer unix.Close(ruleset) //nolint:errcheck // a descriptor only read from
	for _, r := range []struct {
		paths  []string
		rights uint64
	}{
		{append(slices.Clone(readOnly), ro...), readRights & handled},
		{append(slices.Clone(readWrite), rw...), handled},
	} {
		for _, p := range r.paths {
			if err := allow(ruleset, p, r.rights); err != nil {
				return err
			}
		}
	}
	// Required of an unprivileged process before it restricts itself; it also keeps Chromium
	// from gaining privileges through a set-user-ID program.
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(ruleset), 0, 0); errno != 0 {
		return fmt.Errorf("restrict the browser's file view: %w", errno)
	}
	return nil
}

// allow grants rights beneath path (only a file's rights when it is a file); a path the
// machine does not have is skipped.
func allow(ruleset int, path string, rights uint64) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open %s for the browser's file view: %w", path, err)
	}
	defer unix.Close(fd) //nolint:errcheck // an O_PATH descriptor
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		rights &= fileRights
	}
	rule := unix.LandlockPathBeneathAttr{Allowed_access: rights, Parent_fd: int32(fd)}
	if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(&rule)), 0, 0, 0); errno != 0 { //nolint:gosec // the kernel's struct, as x/sys/unix declares it
		return fmt.Errorf("let the browser reach %s: %w", path, errno)
	}
	return nil
}

// browserEnv is Chromium's whole environment: its profile directory as its home and temporary
// directory, and the locale and time zone of the agent's.
func browserEnv(dataDir string) []string {
	env := []string{"HOME=" + dataDir, "TMPDIR=" + dataDir, "PATH=/usr/local/bin:/usr/bin:/bin"}
	for _, k := range []string{"LANG", "LC_ALL", "TZ"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// programDir is the directory of the browser's program and its resources, which it reads.
func programDir(path string) string {
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		path = resolved
	}
	return filepath.Dir(path)
}
