#include "sandbox/seccomp.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <sys/syscall.h>

#include <utility>

namespace fbkit::sandbox {
namespace {

#if defined(__x86_64__)
constexpr unsigned kArch = AUDIT_ARCH_X86_64;
#define FBKIT_SECCOMP 1
#elif defined(__aarch64__)
constexpr unsigned kArch = AUDIT_ARCH_AARCH64;
#define FBKIT_SECCOMP 1
#endif

#ifdef FBKIT_SECCOMP
#define DENY(name) {#name, SYS_##name}
const std::vector<std::pair<const char*, long>>& Denied() {
  static const std::vector<std::pair<const char*, long>> denied = {
      DENY(mount), DENY(umount2), DENY(pivot_root), DENY(swapon), DENY(swapoff), DENY(reboot),
      DENY(kexec_load), DENY(kexec_file_load), DENY(init_module), DENY(finit_module),
      DENY(delete_module), DENY(acct), DENY(settimeofday), DENY(clock_settime),
      DENY(clock_adjtime), DENY(bpf), DENY(perf_event_open), DENY(keyctl), DENY(add_key),
      DENY(request_key), DENY(ptrace), DENY(process_vm_readv), DENY(process_vm_writev),
      DENY(userfaultfd), DENY(unshare), DENY(setns), DENY(open_by_handle_at),
      DENY(name_to_handle_at), DENY(quotactl), DENY(syslog), DENY(fsopen), DENY(fsconfig),
      DENY(fsmount), DENY(fspick), DENY(move_mount), DENY(open_tree), DENY(mount_setattr),
      DENY(io_uring_setup), DENY(io_uring_enter), DENY(io_uring_register), DENY(vhangup),
#if defined(__x86_64__)
      DENY(iopl), DENY(ioperm), DENY(uselib), DENY(lookup_dcookie),
#endif
  };
  return denied;
}
#undef DENY

// Namespace flags of clone(2)'s first argument.
constexpr unsigned kNewNamespaces = CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC |
                                    CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET;

sock_filter Stmt(unsigned short code, unsigned k) { return BPF_STMT(code, k); }
sock_filter Jump(unsigned short code, unsigned k, unsigned char jt, unsigned char jf) {
  return BPF_JUMP(code, k, jt, jf);
}
#endif

}  // namespace

std::string SeccompProgram() {
#ifdef FBKIT_SECCOMP
  const unsigned kErrno = SECCOMP_RET_ERRNO;
  std::vector<sock_filter> p = {
      Stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      Jump(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0),
      Stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
      Stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
  };
#if defined(__x86_64__)
  // x32 system calls (bit 30) take other numbers: refused whole.
  p.push_back(Jump(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1));
  p.push_back(Stmt(BPF_RET | BPF_K, kErrno | EPERM));
#endif
  for (const auto& [name, nr] : Denied()) {
    p.push_back(Jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<unsigned>(nr), 0, 1));
    p.push_back(Stmt(BPF_RET | BPF_K, kErrno | EPERM));
  }
  p.push_back(Jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1));
  p.push_back(Stmt(BPF_RET | BPF_K, kErrno | ENOSYS));
  p.push_back(Jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 1, 0));
  p.push_back(Stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  p.push_back(Stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args)));  // low word
  p.push_back(Jump(BPF_JMP | BPF_JSET | BPF_K, kNewNamespaces, 0, 1));
  p.push_back(Stmt(BPF_RET | BPF_K, kErrno | EPERM));
  p.push_back(Stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  return std::string(reinterpret_cast<const char*>(p.data()), p.size() * sizeof(sock_filter));
#else
  return "";
#endif
}

std::string SeccompProfileJson() {
#ifdef FBKIT_SECCOMP
  std::string names;
  for (const auto& [name, nr] : Denied()) names += std::string(names.empty() ? "" : ", ") + "\"" + name + "\"";
  std::string j = "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [\n";
  j += "  {\"names\": [" + names + "], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": " +
       std::to_string(EPERM) + "},\n";
  j += "  {\"names\": [\"clone3\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": " + std::to_string(ENOSYS) + "}";
  // One rule per namespace flag: clone(2) with that bit of its flags set.
  for (unsigned bit = 1; bit != 0; bit <<= 1) {
    if ((kNewNamespaces & bit) == 0) continue;
    j += ",\n  {\"names\": [\"clone\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": " + std::to_string(EPERM) +
         ", \"args\": [{\"index\": 0, \"value\": " + std::to_string(bit) + ", \"valueTwo\": " +
         std::to_string(bit) + ", \"op\": \"SCMP_CMP_MASKED_EQ\"}]}";
  }
  return j + "\n]}\n";
#else
  return "";
#endif
}

std::vector<std::string> SeccompDenied() {
  std::vector<std::string> out;
#ifdef FBKIT_SECCOMP
  for (const auto& [name, nr] : Denied()) out.push_back(name);
  out.push_back("clone3 (ENOSYS)");
  out.push_back("clone with namespace flags");
#endif
  return out;
}

}  // namespace fbkit::sandbox
