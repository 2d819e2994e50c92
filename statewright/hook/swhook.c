/* statewright-hook-native: the process-form hook's native forwarding client (Linux).
 *
 *   statewright-hook-native [--host=NAME] EVENT      (the arguments of statewright-hook)
 *
 * Hands one hook event to the project's resident hook server (statewright/hook/server.py) over
 * the wire format of statewright/hook/resident.py, checks that the answer is the server's own
 * (HMAC-SHA-256 under the key the server keeps beside the store) and writes it, exit status 0.
 * It decides nothing and words nothing: everything else goes to the Python hook,
 * `statewright-hook` in this program's own directory, by exec, with the same arguments, the
 * hook input it read (a memfd on stdin: nothing is read twice) and STATEWRIGHT_HOOK_NATIVE
 * saying how far it got (`statewright.hook.native`):
 *
 *   ask        no server was asked (none named, no facts yet, a refused connect, anything this
 *              program does not know): the Python hook does everything as usual
 *   self       the server was asked and gave no answer of its own: the hook decides itself
 *   emit=N     the request's nonce and the server's whole reply are on stdin (the hook checks
 *              its MAC again); writing the answer to stdout failed after N bytes
 *   ,deadline=MS  (another host than Claude Code) the hook's deadline, in ms since the epoch:
 *              past it, the Python hook refuses at once in the host's form
 *
 * It finds the server as the Python hook does: the server's name is a digest of the user, the
 * Python installation (its interpreter, prefix and package directory: the "facts" the Python
 * hook writes beside the store, `hook-native-<id>.facts`, the first time it runs for this
 * program), the project and the environment variables that name a server. It trusts what the
 * Python hook trusts: a private run directory, a key file of this user's beside the store, an
 * answer carrying the MAC of the request's nonce. A socket or file anyone planted is never
 * trusted more than that: the worst it can do is send the event to the Python hook.
 *
 * It never outlives the host: with --host=NAME the deadline (STATEWRIGHT_HOOK_DEADLINE, at most
 * 20 s) runs from its start, through reading the input and waiting for the server; past it the
 * Python hook is exec'd to refuse. Without a usable Python hook it refuses by itself: exit 2 and
 * a line on stderr (a refusal for every host statewright wires).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <locale.h>
#include <langinfo.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define NATIVE_ENV "STATEWRIGHT_HOOK_NATIVE"
#define PY_HOOK "statewright-hook"
#define MAGIC "SWH1"
#define NONCE_BYTES 16
#define MAC_BYTES 32
#define KEY_BYTES 32
#define ANSWER_TIMEOUT_MS 20000
#define DEADLINE_MS 20000
#define MAX_REQUEST_BYTES (256u * 1024 * 1024)
#define MAX_ANSWER_BYTES (64u * 1024 * 1024)

/* -- SHA-256 and HMAC (FIPS 180-4, RFC 2104) ------------------------------------------------- */

typedef struct { uint32_t h[8]; uint64_t len; uint8_t buf[64]; size_t n; } sha256_ctx;

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha256_block(sha256_ctx *c, const uint8_t *p) {
    uint32_t w[64], a, b, d, e, f, g, h, cc, t1, t2;
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    a = c->h[0]; b = c->h[1]; cc = c->h[2]; d = c->h[3];
    e = c->h[4]; f = c->h[5]; g = c->h[6]; h = c->h[7];
    for (int i = 0; i < 64; i++) {
        t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
        t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & cc) ^ (b & cc));
        h = g; g = f; f = e; e = d + t1; d = cc; cc = b; b = a; a = t1 + t2;
    }
    c->h[0] += a; c->h[1] += b; c->h[2] += cc; c->h[3] += d;
    c->h[4] += e; c->h[5] += f; c->h[6] += g; c->h[7] += h;
}

static void sha256_init(sha256_ctx *c) {
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(c->h, iv, sizeof iv);
    c->len = 0;
    c->n = 0;
}

static void sha256_update(sha256_ctx *c, const void *data, size_t len) {
    const uint8_t *p = data;
    c->len += len;
    if (c->n) {
        size_t take = 64 - c->n < len ? 64 - c->n : len;
        memcpy(c->buf + c->n, p, take);
        c->n += take; p += take; len -= take;
        if (c->n < 64) return;
        sha256_block(c, c->buf);
        c->n = 0;
    }
    for (; len >= 64; p += 64, len -= 64) sha256_block(c, p);
    memcpy(c->buf, p, len);
    c->n = len;
}

static void sha256_final(sha256_ctx *c, uint8_t out[32]) {
    uint64_t bits = c->len * 8;
    uint8_t pad = 0x80, zero = 0, lenb[8];
    sha256_update(c, &pad, 1);
    while (c->n != 56) sha256_update(c, &zero, 1);
    for (int i = 0; i < 8; i++) lenb[i] = (uint8_t)(bits >> (56 - 8 * i));
    sha256_update(c, lenb, 8);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(c->h[i] >> 24); out[4 * i + 1] = (uint8_t)(c->h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(c->h[i] >> 8); out[4 * i + 3] = (uint8_t)c->h[i];
    }
}

/* HMAC-SHA-256 over the concatenation of up to three parts (key: KEY_BYTES, under a block) */
static void hmac3(const uint8_t *key, size_t klen, const void *a, size_t alen, const void *b,
                  size_t blen, const void *c, size_t clen, uint8_t out[32]) {
    uint8_t block[64] = {0}, inner[32];
    sha256_ctx ctx;
    memcpy(block, key, klen);
    for (int i = 0; i < 64; i++) block[i] ^= 0x36;
    sha256_init(&ctx);
    sha256_update(&ctx, block, 64);
    sha256_update(&ctx, a, alen);
    sha256_update(&ctx, b, blen);
    sha256_update(&ctx, c, clen);
    sha256_final(&ctx, inner);
    for (int i = 0; i < 64; i++) block[i] ^= 0x36 ^ 0x5c;
    sha256_init(&ctx);
    sha256_update(&ctx, block, 64);
    sha256_update(&ctx, inner, 32);
    sha256_final(&ctx, out);
}

static void hex(const uint8_t *d, size_t n, char *out) {
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[d[i] >> 4];
        out[2 * i + 1] = digits[d[i] & 15];
    }
    out[2 * n] = 0;
}

/* -- a growing byte buffer ---------------------------------------------------------------- */

typedef struct { char *p; size_t n, cap; int failed; } buf;

static void put(buf *b, const void *d, size_t n) {
    if (b->failed) return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n + 1) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) { b->failed = 1; return; }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, d, n);
    b->n += n;
    b->p[b->n] = 0;
}

static void puts_(buf *b, const char *s) { put(b, s, strlen(s)); }

/* -- state of this process ---------------------------------------------------------------- */

static char bindir[PATH_MAX];
static char **g_argv;
static int g_argc;
static buf input;             /* the hook input */
static int input_fd = -1;     /* when it was too large to keep: a memfd holding all of it */
static long long deadline_real_ms = 0;  /* --host: the deadline (epoch ms), else 0 */
static long long deadline_mono_ms = 0;  /* the same on the monotonic clock (or the answer's) */

static long long now_ms(clockid_t clk) {
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void refuse_alone(const char *why) {
    /* no Python hook to word a refusal in the host's form: exit 2 is one for every host */
    dprintf(2, "statewright: %s; the call is refused because statewright fails closed\n", why);
    _exit(2);
}

/* A descriptor holding `len` bytes at `data`, read from its start: a memfd, or else a pipe fed
 * by a child of this process. `more` is unused (-1). */
static int bytes_fd(const char *data, size_t len, int more) {
    (void)more;
    int fd = memfd_create("statewright-hook-input", MFD_CLOEXEC);
    if (fd >= 0) {
        size_t off = 0;
        while (off < len) {
            ssize_t w = write(fd, data + off, len - off);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) break;
            off += (size_t)w;
        }
        if (off == len && lseek(fd, 0, SEEK_SET) == 0) return fd;
        close(fd);
    }
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) return -1;
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        close(p[0]);
        size_t off = 0;
        while (off < len) {
            ssize_t w = write(p[1], data + off, len - off);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) _exit(1);
            off += (size_t)w;
        }
        _exit(0);
    }
    close(p[1]);
    return p[0];
}

/* Hand the event to the Python hook beside this program: never returns. `answer`: the bytes
 * for mode emit (else the hook input goes to stdin). */
static void hand_over(const char *mode, const char *answer, size_t answer_len) {
    char path[PATH_MAX + 32], value[96];
    if (snprintf(path, sizeof path, "%s/%s", bindir, PY_HOOK) >= (int)sizeof path)
        refuse_alone("statewright-hook could not be found");
    if (deadline_real_ms)
        snprintf(value, sizeof value, "%s,deadline=%lld", mode, deadline_real_ms);
    else
        snprintf(value, sizeof value, "%s", mode);
    int fd;
    if (answer) fd = bytes_fd(answer, answer_len, -1);
    else if (input_fd >= 0) fd = input_fd;
    else fd = bytes_fd(input.p ? input.p : "", input.n, -1);
    if (fd < 0) refuse_alone("the hook input could not be handed to statewright-hook");
    if (fd != 0) {
        if (dup2(fd, 0) != 0) refuse_alone("the hook input could not be handed to statewright-hook");
        close(fd);
    } else {
        fcntl(0, F_SETFD, 0);
    }
    lseek(0, 0, SEEK_SET);
    if (setenv(NATIVE_ENV, value, 1) != 0) refuse_alone("out of memory");
    char **argv = calloc((size_t)g_argc + 1, sizeof *argv);
    if (!argv) refuse_alone("out of memory");
    argv[0] = path;
    for (int i = 1; i < g_argc; i++) argv[i] = g_argv[i];
    execve(path, argv, environ);
    refuse_alone("statewright-hook (beside statewright-hook-native) could not be run");
}

#define ASK() hand_over("ask", NULL, 0)
#define SELF() hand_over("self", NULL, 0)

/* -- the hook input ------------------------------------------------------------------------- */

static void read_input(void) {
    char chunk[65536];
    for (;;) {
        if (deadline_mono_ms) {
            long long left = deadline_mono_ms - now_ms(CLOCK_MONOTONIC);
            struct pollfd pfd = {0, POLLIN, 0};
            int r = left > 0 ? poll(&pfd, 1, (int)(left > INT_MAX ? INT_MAX : left)) : 0;
            if (r < 0 && errno == EINTR) continue;
            if (r == 0) SELF();  /* past the deadline: the Python hook refuses */
        }
        ssize_t r = read(0, chunk, sizeof chunk);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) ASK();  /* the Python hook words an unreadable input */
        if (r == 0) return;
        if (input.n + (size_t)r <= MAX_REQUEST_BYTES) put(&input, chunk, (size_t)r);
        if (input.failed || input.n + (size_t)r > MAX_REQUEST_BYTES) {
            /* too large to send (the server would not read it): all of it to the Python hook,
             * what was kept, this chunk and the rest */
            int fd = bytes_fd(input.p ? input.p : "", input.failed ? input.n : input.n, -1);
            if (fd < 0) refuse_alone("the hook input could not be kept");
            input_fd = fd;
            lseek(fd, 0, SEEK_END);
            if (write(fd, chunk, (size_t)r) != r) refuse_alone("the hook input could not be kept");
            for (;;) {
                ssize_t m = read(0, chunk, sizeof chunk);
                if (m < 0 && errno == EINTR) continue;
                if (m <= 0) break;
                if (write(fd, chunk, (size_t)m) != m) refuse_alone("the hook input could not be kept");
            }
            lseek(fd, 0, SEEK_SET);
            ASK();
        }
    }
}

/* -- the facts the Python hook would use ----------------------------------------------------- */

static int is_naming(const char *entry) {
    static const char *names[] = {"CLAUDE_PROJECT_DIR=", "CLAUDE_CONFIG_DIR=", "HOME=", "PATH=",
                                  "TMPDIR=", "TMP=", "TEMP=", "LANG=", NULL};
    static const char *prefixes[] = {"STATEWRIGHT_", "XDG_", "PYTHON", "LC_", NULL};
    for (int i = 0; names[i]; i++)
        if (!strncmp(entry, names[i], strlen(names[i]))) return 1;
    for (int i = 0; prefixes[i]; i++)
        if (!strncmp(entry, prefixes[i], strlen(prefixes[i]))) return 1;
    return 0;
}

/* Well-formed UTF-8 without surrogates (as Python decodes it; anything else: ask Python) */
static int utf8_ok(const unsigned char *s) {
    while (*s) {
        unsigned c = *s;
        int n;
        unsigned cp;
        if (c < 0x80) { s++; continue; }
        if (c >= 0xc2 && c <= 0xdf) { n = 1; cp = c & 0x1f; }
        else if (c >= 0xe0 && c <= 0xef) { n = 2; cp = c & 0x0f; }
        else if (c >= 0xf0 && c <= 0xf4) { n = 3; cp = c & 0x07; }
        else return 0;
        for (int i = 1; i <= n; i++) {
            if ((s[i] & 0xc0) != 0x80) return 0;
            cp = cp << 6 | (s[i] & 0x3f);
        }
        if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff))
            return 0;
        s += n + 1;
    }
    return 1;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int is_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Read a small file of this user's (a plain file, no link, no other writer): its length, or -1 */
static ssize_t read_private(const char *path, char *out, size_t cap) {
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != getuid() ||
        (st.st_mode & 022) || st.st_size < 0 || (size_t)st.st_size >= cap) {
        close(fd);
        return -1;
    }
    size_t n = 0;
    for (;;) {
        char extra;
        ssize_t r = n < cap - 1 ? read(fd, out + n, cap - 1 - n) : read(fd, &extra, 1);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 || (r > 0 && n == cap - 1)) { close(fd); return -1; }  /* (or larger) */
        if (r == 0) break;
        n += (size_t)r;
    }
    close(fd);
    out[n] = 0;
    return (ssize_t)n;
}

/* `statewright.config.project_root_dir(None, cwd)`: where a host that names no project runs */
static int project_from_cwd(char *out) {
    char start[PATH_MAX], d[PATH_MAX], probe[PATH_MAX + 32];
    if (!getcwd(start, sizeof start) || !realpath(start, d)) return -1;
    strcpy(start, d);
    for (;;) {
        struct stat st;
        snprintf(probe, sizeof probe, "%s/statewright.json", strcmp(d, "/") ? d : "");
        if (is_file(probe)) break;
        snprintf(probe, sizeof probe, "%s/.git", strcmp(d, "/") ? d : "");
        if (stat(probe, &st) == 0) break;
        snprintf(probe, sizeof probe, "%s/.statewright", strcmp(d, "/") ? d : "");
        if (is_dir(probe)) {
            snprintf(probe, sizeof probe, "%s/.statewright/pyvenv.cfg", strcmp(d, "/") ? d : "");
            if (!is_file(probe)) break;
        }
        if (!strcmp(d, "/")) { strcpy(d, start); break; }
        char *slash = strrchr(d, '/');
        if (slash == d) d[1] = 0;
        else *slash = 0;
    }
    strcpy(out, d);
    return 0;
}

static int ascii_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

/* `resident.shared_store`: 1 yes, 0 no, -1 cannot tell here */
static int shared_store(const char *root) {
    const char *s = getenv("STATEWRIGHT_STORE");
    if (s && *s) {
        int other = 0;
        for (const char *p = s; *p; p++) {
            if ((unsigned char)*p > ' ' && (unsigned char)*p < 0x7f) return 1;
            if (!ascii_space(*p)) other = 1;
        }
        if (other) return -1;
    }
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/statewright.json", root);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return 0;
    buf b = {0};
    char chunk[65536];
    ssize_t r;
    while ((r = read(fd, chunk, sizeof chunk)) > 0) put(&b, chunk, (size_t)r);
    close(fd);
    if (b.failed) return -1;
    int found = b.n && memmem(b.p, b.n, "\"store\"", 7) != NULL;
    free(b.p);
    return found;
}

static int private_dir_ok(const char *path) {
    struct stat st;
    return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid() &&
           !(st.st_mode & 077);
}

/* `STATEWRIGHT_HOOK_DEADLINE` as `hosts.arm_deadline` reads it: ms, or -1 (ask Python) */
static long long deadline_setting(void) {
    const char *s = getenv("STATEWRIGHT_HOOK_DEADLINE");
    if (!s || !*s) return DEADLINE_MS;
    /* plain decimals only (Python's float() takes more: those go to Python) */
    long long whole = 0, frac = 0, scale = 1;
    const char *p = s;
    int digits = 0;
    for (; *p >= '0' && *p <= '9'; p++, digits++) {
        if (whole > 1000000) return -1;
        whole = whole * 10 + (*p - '0');
    }
    if (*p == '.') {
        for (p++; *p >= '0' && *p <= '9'; p++, digits++)
            if (scale < 1000) { frac = frac * 10 + (*p - '0'); scale *= 10; }
    }
    if (*p || !digits) return -1;
    long long ms = whole * 1000 + frac * 1000 / scale;
    if (ms <= 0 || ms > DEADLINE_MS) return DEADLINE_MS;
    if (frac * 1000 % scale) return -1;  /* (sub-millisecond: Python's own clock) */
    return ms;
}

/* The C locale coerced as Python's start-up coerces it (PEP 538): Python sets LC_CTYPE in its
 * own environment, which names the server, so this process does the same first */
static void coerce_locale(void) {
    const char *all = getenv("LC_ALL");
    const char *co = getenv("PYTHONCOERCECLOCALE");
    if ((all && *all) || (co && !strcmp(co, "0"))) return;
    const char *cur = setlocale(LC_CTYPE, "");
    if (!cur || (strcmp(cur, "C") && strcmp(cur, "POSIX"))) return;
    static const char *targets[] = {"C.UTF-8", "C.utf8", "UTF-8", NULL};
    for (int i = 0; targets[i]; i++)
        if (setlocale(LC_CTYPE, targets[i])) {
            const char *codeset = nl_langinfo(CODESET);
            if (!codeset || !*codeset) {
                setlocale(LC_CTYPE, "");
                continue;
            }
            setenv("LC_CTYPE", targets[i], 1);
            return;
        }
}

/* -- one request ------------------------------------------------------------------------------ */

static int wait_fd(int fd, short events) {
    for (;;) {
        long long left = deadline_mono_ms - now_ms(CLOCK_MONOTONIC);
        if (left <= 0) return 0;
        struct pollfd pfd = {fd, events, 0};
        int r = poll(&pfd, 1, (int)(left > INT_MAX ? INT_MAX : left));
        if (r < 0 && errno == EINTR) continue;
        return r > 0;
    }
}

int main(int argc, char **argv) {
    g_argc = argc;
    g_argv = argv;
    int host = argc > 1 && !strncmp(argv[1], "--host=", 7);
    signal(SIGPIPE, SIG_IGN);  /* (as Python: a closed stdout is an error to handle, not death) */
    unsetenv(NATIVE_ENV);
    long long started_mono = now_ms(CLOCK_MONOTONIC), started_real = now_ms(CLOCK_REALTIME);
    long long limit = host ? deadline_setting() : DEADLINE_MS;
    char self[PATH_MAX];
    if (!realpath("/proc/self/exe", self)) refuse_alone("this program cannot find itself");
    strcpy(bindir, self);
    *strrchr(bindir, '/') = 0;
    if (limit < 0) { input_fd = 0; ASK(); }  /* (stdin unread: the Python hook reads it) */
    if (host) {
        deadline_real_ms = started_real + limit;
        deadline_mono_ms = started_mono + limit;
    }
    coerce_locale();
    read_input();
    if (!host) deadline_mono_ms = now_ms(CLOCK_MONOTONIC) + ANSWER_TIMEOUT_MS;

    /* which server (`resident.endpoint`) */
    const char *res = getenv("STATEWRIGHT_HOOK_RESIDENT");
    if (res && !strcmp(res, "0")) ASK();
    const char *project = getenv("CLAUDE_PROJECT_DIR");
    char projbuf[PATH_MAX], root[PATH_MAX], state[PATH_MAX], path[PATH_MAX + 128];
    int project_named = project && *project;
    if (!project_named) {
        if (!host || project_from_cwd(projbuf) != 0) ASK();
        project = projbuf;
    }
    if (project[0] == '~' || !realpath(project, root)) ASK();
    const char *home = getenv("STATEWRIGHT_HOME");
    if (home && *home) {
        if (home[0] == '~' || !realpath(home, state)) ASK();
    } else if (snprintf(state, sizeof state, "%s/.statewright", root) >= (int)sizeof state) {
        ASK();
    }
    snprintf(path, sizeof path, "%s/state.db", state);
    if (!is_file(path)) {
        if (!is_dir(state) || shared_store(root) != 1) ASK();
    }
    uint8_t digest[32];
    char idhex[65], name[65];
    sha256_ctx ctx;
    sha256_init(&ctx);
    sha256_update(&ctx, bindir, strlen(bindir));
    sha256_final(&ctx, digest);
    hex(digest, 16, idhex);
    char facts[3 * PATH_MAX + 8];
    snprintf(path, sizeof path, "%s/hook-native-%s.facts", state, idhex);
    ssize_t flen = read_private(path, facts, sizeof facts);
    {   /* three texts (the interpreter, the prefix, the package), NUL-separated */
        int nuls = 0;
        if (flen <= 0 || facts[0] == 0 || facts[flen - 1] == 0) ASK();
        for (ssize_t i = 0; i < flen; i++) {
            nuls += facts[i] == 0;
            if (facts[i] == 0 && facts[i + 1] == 0) ASK();
        }
        if (nuls != 2) ASK();
    }
    /* the naming variables, sorted, and the request's variables, in the environment's order */
    size_t nenv = 0;
    for (char **e = environ; *e; e++) nenv++;
    char **naming = calloc(nenv + 2, sizeof *naming);
    if (!naming) ASK();
    size_t nn = 0;
    buf env = {0};
    char projvar[PATH_MAX + 32];
    if (!project_named) {
        snprintf(projvar, sizeof projvar, "CLAUDE_PROJECT_DIR=%s", project);
        naming[nn++] = projvar;
    }
    for (char **e = environ; *e; e++) {
        const char *eq = strchr(*e, '=');
        if (!eq || eq == *e) ASK();
        for (char **f = environ; f < e; f++)  /* (a name twice: Python keeps the first) */
            if (!strncmp(*f, *e, (size_t)(eq - *e) + 1)) ASK();
        if (!project_named && !strncmp(*e, "CLAUDE_PROJECT_DIR=", 19)) continue;
        if (is_naming(*e)) {
            if (!utf8_ok((const unsigned char *)*e)) ASK();
            naming[nn++] = *e;
            continue;
        }
        if (strpbrk(*e, "\x1e\x1f")) ASK();
        if (env.n) put(&env, "\x1e", 1);
        put(&env, *e, (size_t)(eq - *e));
        put(&env, "\x1f", 1);
        puts_(&env, eq + 1);
    }
    qsort(naming, nn, sizeof *naming, cmp_str);
    char uid[32];
    snprintf(uid, sizeof uid, "%u", (unsigned)getuid());
    sha256_init(&ctx);
    sha256_update(&ctx, uid, strlen(uid));
    sha256_update(&ctx, "", 1);
    sha256_update(&ctx, facts, (size_t)flen);
    sha256_update(&ctx, "", 1);
    sha256_update(&ctx, root, strlen(root));
    for (size_t i = 0; i < nn; i++) {
        sha256_update(&ctx, "", 1);
        sha256_update(&ctx, naming[i], strlen(naming[i]));
    }
    sha256_final(&ctx, digest);
    hex(digest, 16, name);

    /* the key, beside the store, and the private run directory (`resident._ask`) */
    uint8_t key[KEY_BYTES + 1];
    snprintf(path, sizeof path, "%s/hook-%s.key", state, name);
    if (read_private(path, (char *)key, sizeof key) != KEY_BYTES) ASK();
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    char rundir[PATH_MAX];
    snprintf(rundir, sizeof rundir, "%s/statewright-%s", xdg && *xdg ? xdg : "/tmp", uid);
    if (!private_dir_ok(rundir)) ASK();

    /* the request: argv, variables, input; MAGIC nonce time MAC body */
    buf body = {0};
    for (int i = 1; i < argc; i++) {
        if (strpbrk(argv[i], "\x1e\x1f")) ASK();
        if (i > 1) put(&body, "\x1e", 1);
        puts_(&body, argv[i]);
    }
    put(&body, "", 1);
    put(&body, env.p ? env.p : "", env.n);
    put(&body, "", 1);
    put(&body, input.p ? input.p : "", input.n);
    if (body.failed || env.failed) ASK();
    uint8_t head[4 + NONCE_BYTES + 8], mac[MAC_BYTES];
    memcpy(head, MAGIC, 4);
    if (getrandom(head + 4, NONCE_BYTES, 0) != NONCE_BYTES) ASK();
    long long stamp = now_ms(CLOCK_REALTIME);
    for (int i = 0; i < 8; i++) head[4 + NONCE_BYTES + i] = (uint8_t)(stamp >> (56 - 8 * i));
    hmac3(key, KEY_BYTES, "Q", 1, head, sizeof head, body.p, body.n, mac);

    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (snprintf(addr.sun_path, sizeof addr.sun_path, "%s/%s.sock", rundir, name) >=
        (int)sizeof addr.sun_path)
        ASK();
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (s < 0) ASK();
    if (connect(s, (struct sockaddr *)&addr, sizeof addr) != 0)
        ASK();  /* no server (the Python hook starts one), or one too busy to take more */
    /* from here on the server may have served the event: never ask it again */
    const void *parts[3] = {head, mac, body.p};
    size_t lens[3] = {sizeof head, sizeof mac, body.n};
    for (int i = 0; i < 3; i++) {
        size_t off = 0;
        while (off < lens[i]) {
            ssize_t w = send(s, (const char *)parts[i] + off, lens[i] - off, MSG_NOSIGNAL);
            if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
                if (!wait_fd(s, POLLOUT)) SELF();
                continue;
            }
            if (w <= 0) SELF();
            off += (size_t)w;
        }
    }
    shutdown(s, SHUT_WR);
    buf reply = {0};
    char chunk[65536];
    for (;;) {
        ssize_t r = recv(s, chunk, sizeof chunk, 0);
        if (r < 0 && (errno == EAGAIN || errno == EINTR)) {
            if (!wait_fd(s, POLLIN)) SELF();  /* no answer in time */
            continue;
        }
        if (r < 0) SELF();
        if (r == 0) break;
        put(&reply, chunk, (size_t)r);
        if (reply.failed || reply.n > MAX_ANSWER_BYTES) SELF();
    }
    close(s);
    if (reply.n < 4 + MAC_BYTES || memcmp(reply.p, MAGIC, 4)) SELF();
    const char *out = reply.p + 4 + MAC_BYTES;
    size_t outn = reply.n - 4 - MAC_BYTES;
    hmac3(key, KEY_BYTES, "A", 1, head + 4, NONCE_BYTES, out, outn, mac);
    uint8_t diff = 0;
    for (int i = 0; i < MAC_BYTES; i++) diff |= (uint8_t)(mac[i] ^ (uint8_t)reply.p[4 + i]);
    if (diff) SELF();  /* not the server's */
    for (size_t i = 0; i < outn; i++)
        if ((unsigned char)out[i] >= 0x80) SELF();  /* (the answers are ASCII) */

    /* the answer (`statewright.hook.answer`): nothing, or the text and a newline */
    if (outn == 0) return 0;
    buf line = {0};
    put(&line, out, outn);
    put(&line, "\n", 1);
    if (line.failed) SELF();
    size_t sent = 0;
    while (sent < line.n) {
        ssize_t w = write(1, line.p + sent, line.n - sent);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            /* the Python hook's rules for an answer that could not be written: it gets the
             * nonce and the reply, and believes the answer only with the server's MAC */
            char mode[48];
            buf proof = {0};
            put(&proof, head + 4, NONCE_BYTES);
            put(&proof, reply.p, reply.n);
            if (proof.failed) refuse_alone("the answer could not be written");
            snprintf(mode, sizeof mode, "emit=%zu", sent);
            hand_over(mode, proof.p, proof.n);
        }
        sent += (size_t)w;
    }
    return 0;
}
