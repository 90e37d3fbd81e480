// The seccomp filter every sandboxed process runs under: system calls a test suite or a
// coding agent never needs, and that widen what a process can reach of the kernel, fail
// with EPERM (mounts, modules, kexec, keyrings, bpf, perf, ptrace, namespaces, io_uring,
// clock and swap changes, handle-based opens); clone3 fails with ENOSYS so that libc falls
// back to clone, whose namespace flags are checked. Other architectures than the one fbkit
// was built for are refused.
#pragma once

#include <string>
#include <vector>

namespace fbkit::sandbox {

// The filter as bubblewrap's --seccomp reads it (an array of struct sock_filter); empty
// where fbkit has no filter for this architecture.
std::string SeccompProgram();

// The same filter as an OCI seccomp profile (the JSON podman's `--security-opt seccomp=FILE`
// reads): the calls refused with EPERM, clone3 with ENOSYS, clone with a namespace flag with
// EPERM, everything else allowed; "" where fbkit has no filter for this architecture.
std::string SeccompProfileJson();

// The system calls (by name) the filter refuses, for documentation and tests.
std::vector<std::string> SeccompDenied();

}  // namespace fbkit::sandbox
