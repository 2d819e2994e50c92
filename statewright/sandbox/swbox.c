/* swbox: statewright's sandbox launcher (Linux). Runs one command so that no process it starts
 * can change the paths a workflow state protects, read the paths it hides, read or signal a
 * process outside, or outlive the call.
 *
 *   swbox [--root DIR] [--ro PATH]... [--hide PATH]... [--unset NAME]... [--set NAME=VALUE]...
 *         [--no-net] [--no-unix] [--cwd-file FILE] [--tier auto|ns|landlock] -- PROGRAM ARG...
 *   swbox --probe        prints the tier this machine gives: "namespaces ABI", "landlock ABI",
 *                        or "none ABI WHY"
 *
 * Tiers. "namespaces" (where user namespaces work): a new user, mount and PID namespace (and
 * network namespace with --no-net); each --ro path is a read-only bind over itself, each
 * directory above it (from the root down) a mount point of its own so that it cannot be renamed
 * away, each --hide path an empty read-only tmpfs (a directory) or /dev/null (a file); a fresh
 * /proc shows only the sandbox's processes. "landlock" (where they do not): the same rules as
 * Landlock grants, by enumeration (Landlock only adds rights: the directories on the way to a
 * protected path keep their own entries frozen while the command runs). Both then add a
 * Landlock domain (no ptrace, signal or abstract socket out of it; no mount), a seccomp filter
 * (no io_uring, no namespaces, no mount, no TIOCSTI; no new AF_UNIX socket with --no-unix), no
 * capability, no new privileges, and no descriptor but 0-2. The environment is scrubbed before
 * exec. Everything the command started is killed when it ends.
 *
 * The policy (which paths) is the caller's; this program only enforces it. A missing --ro path
 * is made read-only by its nearest existing directory when that lies inside --root (but is not
 * the root itself); otherwise, if the command creates it, it is removed after the call and
 * reported. Exit status: the command's (128+N for a signal); 125 when the sandbox cannot be set
 * up (with a line on stderr that starts "statewright sandbox:").
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#define SETUP_FAILED 125
#define MAX_PATHS 512

/* ---- Landlock ABI (include/uapi/linux/landlock.h), spelled out: older headers lack it ---- */
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_REMOVE_DIR (1ULL << 4)
#define LL_FS_REMOVE_FILE (1ULL << 5)
#define LL_FS_MAKE_CHAR (1ULL << 6)
#define LL_FS_MAKE_DIR (1ULL << 7)
#define LL_FS_MAKE_REG (1ULL << 8)
#define LL_FS_MAKE_SOCK (1ULL << 9)
#define LL_FS_MAKE_FIFO (1ULL << 10)
#define LL_FS_MAKE_BLOCK (1ULL << 11)
#define LL_FS_MAKE_SYM (1ULL << 12)
#define LL_FS_REFER (1ULL << 13)
#define LL_FS_TRUNCATE (1ULL << 14)
#define LL_FS_IOCTL_DEV (1ULL << 15)
#define LL_NET_BIND_TCP (1ULL << 0)
#define LL_NET_CONNECT_TCP (1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LL_SCOPE_SIGNAL (1ULL << 1)

struct ll_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};
struct ll_path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

#define LL_FILE_RIGHTS (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | \
                        LL_FS_IOCTL_DEV)
#define LL_READ_RIGHTS (LL_FS_EXECUTE | LL_FS_READ_FILE | LL_FS_READ_DIR)

/* ---- options ---- */
static const char *root = NULL, *cwd_file = NULL, *tier = "auto";
static int cwd_fd = -1;
static const char *ro[MAX_PATHS], *hide[MAX_PATHS], *unset_names[MAX_PATHS], *set_pairs[MAX_PATHS];
static int n_ro, n_hide, n_unset, n_set, no_net, no_unix;
/* --ro paths that did not exist before the call and could not be frozen by a directory */
static const char *absent[MAX_PATHS];
static int n_absent;

static void fail(const char *what) {
    fprintf(stderr, "statewright sandbox: %s: %s\n", what, strerror(errno));
    _exit(SETUP_FAILED);
}

static void usage(const char *why) {
    fprintf(stderr, "statewright sandbox: %s (usage: swbox [OPTIONS] -- PROGRAM [ARG...])\n",
            why);
    exit(SETUP_FAILED);
}

static void add(const char **list, int *n, const char *value) {
    if (*n >= MAX_PATHS) usage("too many paths");
    list[(*n)++] = value;
}

/* ---- small helpers ---- */
static int abi_version(void) {
    long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
    return abi < 0 ? 0 : (int)abi;
}

static uint64_t fs_rights(int abi) {
    uint64_t r = (LL_FS_MAKE_SYM << 1) - 1; /* ABI 1: bits 0-12 */
    if (abi >= 2) r |= LL_FS_REFER;
    if (abi >= 3) r |= LL_FS_TRUNCATE;
    if (abi >= 5) r |= LL_FS_IOCTL_DEV;
    return r;
}

static int write_file(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t len = (ssize_t)strlen(text), w = write(fd, text, (size_t)len);
    close(fd);
    return w == len ? 0 : -1;
}

/* whether `path` is `dir` or lies below it */
static int within(const char *path, const char *dir) {
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') n--;
    return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/' || n == 1);
}

/* ---- the namespaces tier ---- */

/* The mount flags a bind must keep (a user namespace may not drop a locked one). */
static unsigned long kept_flags(const char *path) {
    struct statvfs sv;
    unsigned long f = 0;
    if (statvfs(path, &sv) != 0) return 0;
    if (sv.f_flag & ST_NOSUID) f |= MS_NOSUID;
    if (sv.f_flag & ST_NODEV) f |= MS_NODEV;
    if (sv.f_flag & ST_NOEXEC) f |= MS_NOEXEC;
    if (sv.f_flag & ST_NOATIME) f |= MS_NOATIME;
    if (sv.f_flag & ST_NODIRATIME) f |= MS_NODIRATIME;
    if (sv.f_flag & ST_RELATIME) f |= MS_RELATIME;
    return f;
}

static void bind_self(const char *path, int read_only) {
    struct stat st;
    if (lstat(path, &st) != 0) fail(path);
    if (S_ISLNK(st.st_mode)) {
        errno = ELOOP;
        fail(path);
    }
    if (mount(path, path, NULL, MS_BIND | MS_REC, NULL) != 0) fail(path);
    if (read_only &&
        mount(NULL, path, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | kept_flags(path), NULL) != 0)
        fail(path);
}

static int is_pinned(char pinned[][4096], int n, const char *p) {
    for (int i = 0; i < n; i++)
        if (strcmp(pinned[i], p) == 0) return 1;
    return 0;
}

/* Each directory above `path` (but /) becomes a mount point of its own, so that no process can
 * rename it (EBUSY) and carry the protected path away with it. */
static char pins[MAX_PATHS][4096];
static int n_pins;

static void pin_ancestors(const char *path) {
    char buf[4096];
    size_t len = strlen(path);
    if (len >= sizeof buf) return;
    for (size_t i = 1; i < len; i++) {
        if (path[i] != '/') continue;
        memcpy(buf, path, i);
        buf[i] = '\0';
        if (is_pinned(pins, n_pins, buf) || n_pins >= MAX_PATHS) continue;
        struct stat st;
        if (lstat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) return;
        strcpy(pins[n_pins++], buf);
        bind_self(buf, 0);
    }
}

static int cmp_depth(const void *a, const void *b) {
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    int dx = 0, dy = 0;
    for (; *x; x++) dx += *x == '/';
    for (; *y; y++) dy += *y == '/';
    return dx - dy;
}

/* The nearest existing directory above a missing `path`, into `out` (empty: none). */
static void existing_parent(const char *path, char *out, size_t size) {
    struct stat st;
    snprintf(out, size, "%s", path);
    for (;;) {
        char *slash = strrchr(out, '/');
        if (!slash || slash == out) {
            out[0] = '\0';
            return;
        }
        *slash = '\0';
        if (lstat(out, &st) == 0) {
            if (!S_ISDIR(st.st_mode)) out[0] = '\0';
            return;
        }
    }
}

static void mount_rules(void) {
    if (mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) fail("making / private");
    if (root) {
        bind_self(root, 0); /* the project root itself cannot be renamed away */
        strcpy(pins[n_pins++], root);
    }
    /* read-only binds, shallow first (a deeper bind stays on top of a shallower one) */
    const char *order[MAX_PATHS];
    int n = 0;
    static char frozen[MAX_PATHS][4096];
    for (int i = 0; i < n_ro; i++) {
        struct stat st;
        if (lstat(ro[i], &st) == 0) {
            order[n++] = ro[i];
            continue;
        }
        char parent[4096];
        existing_parent(ro[i], parent, sizeof parent);
        if (root && parent[0] && within(parent, root) && strcmp(parent, root) != 0) {
            snprintf(frozen[i], sizeof frozen[i], "%s", parent);
            order[n++] = frozen[i];
        } else {
            add(absent, &n_absent, ro[i]);
        }
    }
    qsort(order, (size_t)n, sizeof *order, cmp_depth);
    for (int i = 0; i < n; i++) {
        pin_ancestors(order[i]);
        bind_self(order[i], 1);
    }
    for (int i = 0; i < n_hide; i++) {
        struct stat st;
        if (lstat(hide[i], &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            if (mount("tmpfs", hide[i], "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                      "size=4k,nr_inodes=2,mode=0555") != 0)
                fail(hide[i]);
        } else {
            if (mount("/dev/null", hide[i], NULL, MS_BIND, NULL) != 0) fail(hide[i]);
            if (mount(NULL, hide[i], NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | kept_flags(hide[i]),
                      NULL) != 0)
                fail(hide[i]);
        }
    }
}

static int enter_namespaces(void) {
    uid_t uid = getuid();
    gid_t gid = getgid();
    int flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | (no_net ? CLONE_NEWNET : 0);
    if (unshare(flags) != 0) return -1;
    char map[64];
    if (write_file("/proc/self/setgroups", "deny") != 0 && errno != ENOENT) fail("setgroups");
    /* the caller's own ids (a process that made the namespace may map nothing else; without
     * capabilities, root inside has no more rights than an owner) */
    snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
    if (write_file("/proc/self/uid_map", map) != 0) fail("uid_map");
    snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
    if (write_file("/proc/self/gid_map", map) != 0) fail("gid_map");
    return 0;
}

static void loopback_up(void) {
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0) return;
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    strcpy(ifr.ifr_name, "lo");
    if (ioctl(s, SIOCGIFFLAGS, &ifr) == 0) {
        ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
        ioctl(s, SIOCSIFFLAGS, &ifr);
    }
    close(s);
}

/* ---- the Landlock domain ---- */

static int ll_rule(int ruleset, const char *path, uint64_t rights) {
    int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT || errno == ELOOP ? 0 : -1;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return -1;
    }
    if (S_ISLNK(st.st_mode)) { /* a link never grants its target */
        close(fd);
        return 0;
    }
    if (!S_ISDIR(st.st_mode)) rights &= LL_FILE_RIGHTS;
    struct ll_path_beneath_attr pb = {.allowed_access = rights, .parent_fd = fd};
    int r = rights ? (int)syscall(__NR_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &pb, 0) : 0;
    close(fd);
    return r;
}

static int listed(const char **list, int n, const char *p) {
    for (int i = 0; i < n; i++)
        if (strcmp(list[i], p) == 0) return 1;
    return 0;
}

static int holds_listed(const char *dir) {
    for (int i = 0; i < n_ro; i++)
        if (within(ro[i], dir) && strcmp(ro[i], dir) != 0) return 1;
    for (int i = 0; i < n_hide; i++)
        if (within(hide[i], dir) && strcmp(hide[i], dir) != 0) return 1;
    return 0;
}

/* Landlock only adds rights, so "everything but P" is every sibling of every directory on the
 * way to P: walk down from `dir`, granting `all` to each entry that holds nothing listed. */
static int ll_enumerate(int ruleset, const char *dir, uint64_t all, uint64_t readonly) {
    DIR *d = opendir(dir);
    if (!d) return errno == ENOENT || errno == EACCES ? 0 : -1;
    struct dirent *e;
    char path[4096];
    int r = 0;
    while (r == 0 && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (snprintf(path, sizeof path, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", e->d_name) >=
            (int)sizeof path)
            continue;
        if (listed(hide, n_hide, path)) continue;
        if (listed(ro, n_ro, path)) r = ll_rule(ruleset, path, readonly);
        else if (holds_listed(path)) {
            r = ll_rule(ruleset, path, LL_FS_READ_DIR);
            if (r == 0) r = ll_enumerate(ruleset, path, all, readonly);
        } else r = ll_rule(ruleset, path, all);
    }
    closedir(d);
    return r;
}

static void landlock_domain(int abi, int enumerate) {
    if (abi < 2) {
        errno = ENOSYS;
        fail("Landlock ABI 2 or later is needed");
    }
    uint64_t all = fs_rights(abi);
    struct ll_ruleset_attr attr = {.handled_access_fs = all};
    if (abi >= 4 && no_net && enumerate) /* (the namespaces tier has a network namespace) */
        attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
    if (abi >= 6) attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
    size_t size = abi >= 6 ? sizeof attr : abi >= 4 ? offsetof(struct ll_ruleset_attr, scoped)
                                                    : sizeof attr.handled_access_fs;
    int rs = (int)syscall(__NR_landlock_create_ruleset, &attr, size, 0);
    if (rs < 0) fail("landlock_create_ruleset");
    int r;
    if (enumerate) {
        /* no device nodes anywhere */
        uint64_t writable = all & ~(LL_FS_MAKE_CHAR | LL_FS_MAKE_BLOCK);
        r = ll_rule(rs, "/", LL_FS_READ_DIR);
        if (r == 0) r = ll_enumerate(rs, "/", writable, LL_READ_RIGHTS);
        /* /dev entries the enumeration left read-only still work as devices */
    } else {
        r = ll_rule(rs, "/", all); /* the mounts already bind: the domain is for scoping */
    }
    if (r != 0) fail("landlock_add_rule");
    if (syscall(__NR_landlock_restrict_self, rs, 0) != 0) fail("landlock_restrict_self");
    close(rs);
}

/* ---- seccomp ---- */
#if defined(__x86_64__)
#define SW_AUDIT_ARCH AUDIT_ARCH_X86_64
#define SW_X32_BIT 0x40000000
#elif defined(__aarch64__)
#define SW_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "swbox: unsupported architecture"
#endif

#define LOAD_NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define LOAD_ARG0 BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]))
#define LOAD_ARG1 BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1]))
#define RET(v) BPF_STMT(BPF_RET | BPF_K, (v))
#define DENY RET(SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))

static void seccomp_filter(void) {
    /* namespace flags clone(2) may not be given */
    const uint32_t ns_flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET |
                              CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWCGROUP;
    static const int denied[] = {
        __NR_unshare, __NR_setns, __NR_mount, __NR_umount2, __NR_pivot_root,
        __NR_io_uring_setup, __NR_io_uring_enter, __NR_io_uring_register,
        __NR_open_tree, __NR_move_mount, __NR_fsopen, __NR_fsconfig, __NR_fsmount, __NR_fspick,
        __NR_mount_setattr, __NR_keyctl, __NR_add_key, __NR_request_key, __NR_bpf,
        __NR_perf_event_open, __NR_userfaultfd,
    };
    enum { N_DENIED = sizeof denied / sizeof denied[0] };
    struct sock_filter f[64 + N_DENIED];
    int n = 0;
    f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                          offsetof(struct seccomp_data, arch));
    f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SW_AUDIT_ARCH, 1, 0);
    f[n++] = (struct sock_filter)RET(SECCOMP_RET_KILL_PROCESS);
    f[n++] = (struct sock_filter)LOAD_NR;
#ifdef SW_X32_BIT
    f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, SW_X32_BIT, 0, 1);
    f[n++] = (struct sock_filter)RET(SECCOMP_RET_KILL_PROCESS);
#endif
    for (int i = 0; i < N_DENIED; i++) {
        f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)denied[i], 0, 1);
        f[n++] = (struct sock_filter)DENY;
    }
    /* clone3 hides its flags behind a pointer: ENOSYS makes the C library fall back to clone */
    f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1);
    f[n++] = (struct sock_filter)RET(SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA));
    /* clone(flags, ...): flags is the first argument on x86_64 and aarch64 */
    f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 4);
    f[n++] = (struct sock_filter)LOAD_ARG0;
    f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, ns_flags, 0, 1);
    f[n++] = (struct sock_filter)DENY;
    f[n++] = (struct sock_filter)RET(SECCOMP_RET_ALLOW);
    /* ioctl(fd, TIOCSTI | TIOCLINUX): typing into a terminal outside */
    f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 5);
    f[n++] = (struct sock_filter)LOAD_ARG1;
    f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TIOCSTI, 2, 0);
    f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TIOCLINUX, 1, 0);
    f[n++] = (struct sock_filter)RET(SECCOMP_RET_ALLOW);
    f[n++] = (struct sock_filter)DENY;
    if (no_unix) {
        /* socket(AF_UNIX, ...): no new Unix socket, so no server outside can be asked to act
         * (socketpair(2) still works: it reaches nothing outside) */
        f[n++] = (struct sock_filter)LOAD_NR;
        f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, 3);
        f[n++] = (struct sock_filter)LOAD_ARG0;
        f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 0, 1);
        f[n++] = (struct sock_filter)DENY;
    }
    f[n++] = (struct sock_filter)RET(SECCOMP_RET_ALLOW);
    struct sock_fprog prog = {.len = (unsigned short)n, .filter = f};
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) fail("seccomp");
}

/* ---- capabilities ---- */
struct cap_header {
    uint32_t version;
    int pid;
};
struct cap_data {
    uint32_t effective, permitted, inheritable;
};

static void drop_capabilities(void) {
    /* no root that regains capabilities on exec, no capability set that grows back */
    prctl(PR_SET_SECUREBITS, 0x2f /* NOROOT, NO_SETUID_FIXUP, KEEP_CAPS_LOCKED + locks */, 0, 0, 0);
    for (int cap = 0; cap < 64; cap++) prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    struct cap_header h = {0x20080522 /* _LINUX_CAPABILITY_VERSION_3 */, 0};
    struct cap_data d[2];
    memset(d, 0, sizeof d);
    if (syscall(SYS_capset, &h, d) != 0) fail("capset");
}

/* ---- environment ---- */
static char **child_env;

static void build_env(void) {
    extern char **environ;
    int n = 0;
    for (char **e = environ; *e; e++) n++;
    child_env = calloc((size_t)(n + n_set + 2), sizeof *child_env);
    if (!child_env) fail("memory");
    int k = 0;
    for (char **e = environ; *e; e++) {
        const char *eq = strchr(*e, '=');
        size_t len = eq ? (size_t)(eq - *e) : strlen(*e);
        int drop = 0;
        for (int i = 0; i < n_unset && !drop; i++)
            drop = strlen(unset_names[i]) == len && strncmp(unset_names[i], *e, len) == 0;
        for (int i = 0; i < n_set && !drop; i++) {
            const char *q = strchr(set_pairs[i], '=');
            drop = q && (size_t)(q - set_pairs[i]) == len && strncmp(set_pairs[i], *e, len) == 0;
        }
        if (!drop) child_env[k++] = strdup(*e);
    }
    for (int i = 0; i < n_set; i++) child_env[k++] = strdup(set_pairs[i]);
    if (cwd_file) {
        char *v = malloc(strlen(cwd_file) + 32);
        if (!v) fail("memory");
        sprintf(v, "STATEWRIGHT_CWD_FILE=%s", cwd_file);
        child_env[k++] = v;
    }
    child_env[k] = NULL;
    /* The text this process was started with stays readable as /proc/PID/environ for as long
     * as it runs: wipe it, so a blocked value is nowhere in a process the sandbox could reach. */
    for (char **e = environ; *e; e++) memset(*e, 0, strlen(*e));
}

/* ---- supervision ---- */
static pid_t child = -1;

static void forward(int sig) {
    if (child > 0) kill(child, sig);
}

static int status_of(int ws) {
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : WIFSIGNALED(ws) ? 128 + WTERMSIG(ws) : 1;
}

/* run PROGRAM: the last process, inside every restriction */
static void exec_command(char **argv, int abi, int enumerate) {
    if (setsid() < 0 && errno != EPERM) fail("setsid");
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail("no_new_privs");
    landlock_domain(abi, enumerate);
    seccomp_filter();
    drop_capabilities();
    /* descriptors from outside (an inherited writable file would bypass every rule) */
    if (syscall(SYS_close_range, 3U, ~0U, 0) != 0) {
        for (int fd = 3; fd < 65536; fd++) close(fd);
    }
    extern char **environ;
    environ = child_env;
    execvp(argv[0], argv);
    fprintf(stderr, "statewright sandbox: %s: %s\n", argv[0], strerror(errno));
    _exit(errno == ENOENT ? 127 : 126);
}

/* Remove what the command created at a protected path that could not be frozen. */
static void remove_tree(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (d) {
            struct dirent *e;
            char sub[4096];
            while ((e = readdir(d)) != NULL) {
                if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
                snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
                remove_tree(sub);
            }
            closedir(d);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

static void undo_absent(void) {
    for (int i = 0; i < n_absent; i++) {
        struct stat st;
        if (lstat(absent[i], &st) != 0) continue;
        remove_tree(absent[i]);
        fprintf(stderr, "statewright sandbox: removed %s, which the command created: "
                        "statewright protects it in this state\n", absent[i]);
    }
}

/* Hand the shell's last directory (written by the command to --cwd-file) to --cwd-fd. The file
 * lies where the command could write: it is read only if it is still a plain file of ours with
 * one name, so a link cannot make this process read what the sandbox hides. */
static void report_cwd(void) {
    if (!cwd_file) return;
    char buf[4097];
    ssize_t n = -1;
    int fd = open(cwd_file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) {
        struct stat st;
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1 &&
            st.st_uid == getuid() && st.st_size < (off_t)sizeof buf)
            n = read(fd, buf, sizeof buf - 1);
        close(fd);
    }
    unlink(cwd_file);
    if (cwd_fd < 0 || n <= 1) return;
    buf[n] = '\0';
    if (buf[n - 1] == '\n') buf[--n] = '\0';
    if (buf[0] != '/' || strchr(buf, '\n')) return;
    ssize_t w = write(cwd_fd, buf, (size_t)n);
    (void)w;
}

static int probe(void) {
    int abi = abi_version();
    pid_t pid = fork();
    if (pid == 0) {
        no_net = 0;
        _exit(unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID) == 0 ? 0 : 1);
    }
    int ws = 0;
    waitpid(pid, &ws, 0);
    int userns = WIFEXITED(ws) && WEXITSTATUS(ws) == 0;
    if (abi >= 2 && userns) printf("namespaces %d\n", abi);
    else if (abi >= 2) printf("landlock %d\n", abi);
    else printf("none %d %s\n", abi, abi == 1 ? "Landlock ABI 1 (no REFER)" : "no Landlock");
    return 0;
}

int main(int argc, char **argv) {
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (strcmp(a, "--probe") == 0) return probe();
        if (strcmp(a, "--no-net") == 0) no_net = 1;
        else if (strcmp(a, "--no-unix") == 0) no_unix = 1;
        else if (i + 1 >= argc) usage("an option needs a value");
        else if (strcmp(a, "--root") == 0) root = argv[++i];
        else if (strcmp(a, "--ro") == 0) add(ro, &n_ro, argv[++i]);
        else if (strcmp(a, "--hide") == 0) add(hide, &n_hide, argv[++i]);
        else if (strcmp(a, "--unset") == 0) add(unset_names, &n_unset, argv[++i]);
        else if (strcmp(a, "--set") == 0) add(set_pairs, &n_set, argv[++i]);
        else if (strcmp(a, "--cwd-file") == 0) cwd_file = argv[++i];
        else if (strcmp(a, "--cwd-fd") == 0) cwd_fd = atoi(argv[++i]);
        else if (strcmp(a, "--tier") == 0) tier = argv[++i];
        else usage("unknown option");
    }
    if (i >= argc) usage("no program");
    for (int k = 0; k < n_ro; k++)
        if (ro[k][0] != '/') usage("paths must be absolute");
    for (int k = 0; k < n_hide; k++)
        if (hide[k][0] != '/') usage("paths must be absolute");
    if (root && root[0] != '/') usage("paths must be absolute");
    char **command = argv + i;

    build_env();
    if (cwd_file) { /* a fresh file of ours for the shell's last directory (never a link) */
        unlink(cwd_file);
        int fd = open(cwd_file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0) close(fd);
    }
    int abi = abi_version();
    int use_ns = strcmp(tier, "landlock") != 0 && enter_namespaces() == 0;
    if (!use_ns && strcmp(tier, "ns") == 0) fail("user namespaces");
    if (!use_ns && abi < 2) {
        errno = ENOSYS;
        fail("no kernel tier on this machine (no user namespaces, no Landlock ABI 2)");
    }

    char here[4096];
    if (!getcwd(here, sizeof here)) fail("getcwd");
    if (use_ns) {
        mount_rules();
        /* the working directory was looked up before the binds: look it up again, through
         * them (else a relative path would reach the files under the read-only binds) */
        if (chdir(here) != 0) fail("chdir");
    } else {
        /* Landlock alone: keep track of every descendant, to kill what outlives the command */
        prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        for (int k = 0; k < n_ro; k++) {
            struct stat st;
            if (lstat(ro[k], &st) != 0) {
                char parent[4096];
                existing_parent(ro[k], parent, sizeof parent);
                if (!(root && parent[0] && within(parent, root) && strcmp(parent, root) != 0))
                    add(absent, &n_absent, ro[k]);
            }
        }
    }

    signal(SIGTERM, forward);
    signal(SIGINT, forward);
    signal(SIGHUP, forward);
    signal(SIGQUIT, forward);
    child = fork();
    if (child < 0) fail("fork");
    if (child == 0) {
        if (use_ns) {
            /* PID 1 of the new namespace: when it exits, the kernel kills every process left */
            prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
            if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0 &&
                errno != EPERM && errno != EBUSY)
                fail("mounting /proc");
            if (no_net) loopback_up();
            prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
            pid_t cmd = fork();
            if (cmd < 0) fail("fork");
            if (cmd == 0) exec_command(command, abi, 0);
            child = cmd;
            signal(SIGTERM, forward);
            signal(SIGINT, forward);
            signal(SIGHUP, forward);
            signal(SIGQUIT, forward);
            for (;;) { /* reap everything; the command's own status is the answer */
                int ws;
                pid_t p = wait(&ws);
                if (p == cmd) _exit(status_of(ws));
                if (p < 0 && errno != EINTR) _exit(SETUP_FAILED);
            }
        }
        prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        exec_command(command, abi, 1);
    }
    int ws = 0, status;
    while (waitpid(child, &ws, 0) < 0 && errno == EINTR) {
    }
    status = status_of(ws);
    if (!use_ns) { /* kill and reap what the command left behind (its session, and orphans) */
        kill(-child, SIGKILL);
        pid_t p;
        int left;
        for (int round = 0; round < 50; round++) {
            DIR *d = opendir("/proc");
            if (!d) break;
            struct dirent *e;
            int any = 0;
            char path[64], buf[512];
            while ((e = readdir(d)) != NULL) {
                pid_t pid = (pid_t)atoi(e->d_name);
                if (pid <= 0) continue;
                snprintf(path, sizeof path, "/proc/%d/stat", pid);
                int fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0) continue;
                ssize_t r = read(fd, buf, sizeof buf - 1);
                close(fd);
                if (r <= 0) continue;
                buf[r] = '\0';
                char *rp = strrchr(buf, ')');
                int ppid = 0;
                if (rp && sscanf(rp + 2, "%*c %d", &ppid) == 1 && ppid == getpid()) {
                    kill(pid, SIGKILL);
                    any = 1;
                }
            }
            closedir(d);
            while ((p = waitpid(-1, &left, WNOHANG)) > 0) any = 1;
            if (!any) break;
        }
    }
    undo_absent();
    report_cwd();
    return status;
}
