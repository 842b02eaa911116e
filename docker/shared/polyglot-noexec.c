/*
 * polyglot-noexec: start a test binary that cannot start programs, and outlive it.
 *
 *     polyglot-noexec [--allow-exec] PROGRAM [ARG...]
 *
 * The grading runners (docker/<lang>/polyglot-*-test) start every test binary through this
 * launcher, after the hidden test sources were compiled and deleted, i.e. at the first moment
 * solution code runs. The launcher
 *
 * 1. makes itself non-dumpable (same-uid code cannot read its /proc/PID/fd or memory), then
 *    forks; it stays as the supervisor of the child;
 * 2. in the child: its own process group, PR_SET_PDEATHSIG, no-new-privs, and a seccomp
 *    filter (inherited by every thread and fork, irremovable) under which
 *      - execve fails (EPERM) unless its path argument is the exact address of a buffer this
 *        launcher mapped at a random address, which it then uses for ITS OWN execve of
 *        PROGRAM: the one exec that starts the test binary; after it the address means
 *        nothing, and guessing it (about 2^35 candidates) takes hours, not the 2 minutes a
 *        test run has;
 *      - execveat fails (fexecve, memfd images);
 *      - ptrace, process_vm_readv/writev, pidfd_open/pidfd_getfd fail (no reaching into the
 *        supervisor or the runner scripts, which the filter does not cover);
 *      - setsid and setpgid fail (everything the test binary forks stays in its group);
 *      - kill, tgkill, rt_(tg)sigqueueinfo only reach the test binary's own pid or its
 *        group (0); tkill fails (no signalling the supervisor or the runner);
 *      - any other architecture (i386 int 0x80) or x32 system call is refused;
 *    with --allow-exec (exercises whose hidden tests start programs, e.g. rust__macros runs
 *    cargo) execve/execveat stay allowed and the rest holds;
 * 3. in the supervisor: waits for the child, then SIGKILLs the child's process group (nothing
 *    the test binary forked outlives it to rewrite a report the runner writes afterwards),
 *    forwards SIGTERM/SIGINT/SIGHUP (a `timeout`) as that same kill, and exits with the
 *    child's status (128 + signal when it was killed).
 *
 * The containers run with cap_drop ALL and no-new-privileges: installing a seccomp filter
 * needs neither a capability nor anything the sandbox does not already allow.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd 438
#endif

extern char **environ;

static volatile pid_t child_pid = 0;

#define ARG_LO(n) (offsetof(struct seccomp_data, args) + 8 * (n))
#define ARG_HI(n) (offsetof(struct seccomp_data, args) + 8 * (n) + 4)
#define LOAD(offset) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (offset))
#define RET(value) BPF_STMT(BPF_RET | BPF_K, (value))
#define DENY RET(SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))
#define ALLOW RET(SECCOMP_RET_ALLOW)
/* Jump to the instruction `skip` ahead when the accumulator equals k, else fall through. */
#define IF_EQ(k, skip) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (k), (skip), 0)

static void die(const char *what) {
    fprintf(stderr, "polyglot-noexec: %s: %s\n", what, strerror(errno));
    _exit(127);
}

/* A page at a random address (not ASLR's predictable neighbourhood) holding PROGRAM's path. */
static char *random_page(void) {
    long page = sysconf(_SC_PAGESIZE);
    for (int attempt = 0; attempt < 64; attempt++) {
        uint64_t random_bits;
        if (getrandom(&random_bits, sizeof random_bits, 0) != sizeof random_bits) die("getrandom");
        /* 2^47 user address space, page aligned, above the first 4 GiB. */
        uintptr_t address = (uintptr_t)((random_bits % ((1ULL << 47) - (1ULL << 32))) + (1ULL << 32));
        address &= ~(uintptr_t)(page - 1);
        void *mapped = mmap((void *)address, page, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        if (mapped == (void *)address) return mapped;
        if (mapped != MAP_FAILED) munmap(mapped, page);
    }
    errno = EADDRINUSE;
    die("mmap");
    return NULL;
}

/* The program as execvp would find it (a name without '/' is looked up on PATH). */
static void resolve(const char *program, char *out, size_t size) {
    if (strchr(program, '/')) {
        snprintf(out, size, "%s", program);
        return;
    }
    const char *path = getenv("PATH");
    if (!path) path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *end = strchrnul(path, ':');
        snprintf(out, size, "%.*s/%s", (int)(end - path), path, program);
        if (access(out, X_OK) == 0) return;
        path = *end ? end + 1 : end;
    }
    snprintf(out, size, "%s", program);
}

static void install_filter(const char *exec_path, int allow_exec, pid_t self) {
    uint64_t address = (uint64_t)(uintptr_t)exec_path;
    uint32_t lo = (uint32_t)address, hi = (uint32_t)(address >> 32), pid = (uint32_t)self;
    struct sock_filter filter[] = {
        LOAD(offsetof(struct seccomp_data, arch)),
        IF_EQ(AUDIT_ARCH_X86_64, 1),
        RET(SECCOMP_RET_KILL_PROCESS),
        LOAD(offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1), /* x32 */
        DENY,
        /* execve: allowed everywhere (--allow-exec) or only from the launcher's own page. */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_execve, 0, 8),
        BPF_JUMP(BPF_JMP | BPF_JA, allow_exec ? 0u : 1u, 0, 0), /* a constant branch */
        ALLOW,
        LOAD(ARG_LO(0)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, lo, 0, 3),
        LOAD(ARG_HI(0)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, hi, 0, 1),
        ALLOW,
        DENY,
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_execveat, 0, 3),
        BPF_JUMP(BPF_JMP | BPF_JA, allow_exec ? 0u : 1u, 0, 0),
        ALLOW,
        DENY,
        /* Reaching other processes of the same uid. */
        IF_EQ(__NR_ptrace, 8),
        IF_EQ(__NR_process_vm_readv, 7),
        IF_EQ(__NR_process_vm_writev, 6),
        IF_EQ(__NR_pidfd_open, 5),
        IF_EQ(__NR_pidfd_getfd, 4),
        IF_EQ(__NR_setsid, 3),
        IF_EQ(__NR_setpgid, 2),
        IF_EQ(__NR_tkill, 1),
        BPF_JUMP(BPF_JMP | BPF_JA, 1, 0, 0),
        DENY,
        /* Signals: only to the test binary itself (or its own group, pid 0). */
        IF_EQ(__NR_kill, 4),
        IF_EQ(__NR_tgkill, 3),
        IF_EQ(__NR_rt_sigqueueinfo, 2),
        IF_EQ(__NR_rt_tgsigqueueinfo, 1),
        ALLOW,
        LOAD(ARG_LO(0)),
        IF_EQ(pid, 2),
        IF_EQ(0, 1),
        DENY,
        ALLOW,
    };
    struct sock_fprog program = {.len = sizeof filter / sizeof filter[0], .filter = filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("PR_SET_NO_NEW_PRIVS");
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) != 0) die("seccomp");
}

static void run_child(char **argv, int allow_exec) {
    if (setpgid(0, 0) != 0) die("setpgid");
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) die("PR_SET_PDEATHSIG");
    char *path = random_page();
    resolve(argv[0], path, (size_t)sysconf(_SC_PAGESIZE));
    install_filter(path, allow_exec, getpid());
    execve(path, argv, environ);
    die(argv[0]);
}

static void end_child_group(int signal_number) {
    (void)signal_number;
    if (child_pid > 0) kill(-child_pid, SIGKILL);
    _exit(128 + SIGTERM);
}

int main(int argc, char **argv) {
    int first = 1, allow_exec = 0;
    if (argc > 1 && strcmp(argv[1], "--allow-exec") == 0) {
        allow_exec = 1;
        first = 2;
    }
    if (first >= argc) {
        fprintf(stderr, "usage: polyglot-noexec [--allow-exec] PROGRAM [ARG...]\n");
        return 2;
    }
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) die("PR_SET_DUMPABLE");
    struct sigaction forward = {.sa_handler = end_child_group};
    sigemptyset(&forward.sa_mask);
    sigaction(SIGTERM, &forward, NULL);
    sigaction(SIGINT, &forward, NULL);
    sigaction(SIGHUP, &forward, NULL);
    pid_t pid = fork();
    if (pid < 0) die("fork");
    if (pid == 0) {
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        run_child(argv + first, allow_exec);
    }
    child_pid = pid;
    setpgid(pid, pid); /* also from this side: the group exists before we may kill it */
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) die("waitpid");
    }
    kill(-pid, SIGKILL);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}
