package engine

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// availableMemory returns the memory the process may use: the physical
// memory, or the limit of its cgroup (v2 memory.max, v1
// memory.limit_in_bytes) when lower; 0 when unknown.
func availableMemory() int64 {
	var si syscall.Sysinfo_t
	var mem int64
	if syscall.Sysinfo(&si) == nil {
		mem = int64(uint64(si.Totalram) * uint64(si.Unit))
	}
	for _, f := range cgroupLimitFiles() {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err == nil && n > 0 && (mem == 0 || n < mem) {
			mem = n // "max" (v2) does not parse; v1's "no limit" is a huge number
		}
	}
	return mem
}

// cgroupLimitFiles lists the files that may hold the process's memory
// limit: those of its own cgroup (from /proc/self/cgroup) and of the root
// a container sees.
func cgroupLimitFiles() []string {
	files := []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return files
	}
	for _, line := range strings.Split(string(b), "\n") {
		// v2: "0::/path"; v1: "N:memory:/path" (or "N:...,memory,...:/path").
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 || parts[2] == "/" || strings.Contains(parts[2], "..") {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			files = append(files, "/sys/fs/cgroup"+parts[2]+"/memory.max")
		case strings.Contains(","+parts[1]+",", ",memory,"):
			files = append(files, "/sys/fs/cgroup/memory"+parts[2]+"/memory.limit_in_bytes")
		}
	}
	return files
}
