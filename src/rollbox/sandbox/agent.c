/* rollbox sandbox agent, compiled: PID 1 of a sandbox, started by bwrap.
 *
 * The same protocol as agent.sh (the fallback where no C compiler is found), in a process that
 * starts in a fraction of bash's time and forks a request's supervisor and command without
 * copying an interpreter. It runs the host's requests and reports on them; everything a command
 * starts is its descendant, so it shares the sandbox's namespaces, cgroup, dropped capabilities,
 * seccomp filter and no-new-privs.
 *
 * Requests arrive on fd $RB_REQ_FD, one line each:   run ID  |  kill ID  |  forget ID  |  exit
 * Events go to fd $RB_EVT_FD, one line each:         cpu ID USER SYS, done ID STATUS, killed ID
 * STATUS is the exit status, or 128+N for a command ended by signal N (bash's convention).
 * Each request has a supervisor (a process group of its own) that holds ID.life open while it
 * lives, so that the host sees it go even when a command kills it (`kill -9 -1`) before it could
 * report. A request's files are under $RB_CTL (read-only here): ID.req (cwd, "CPU FSIZE NOFILE",
 * argc, then argv and env NUL-separated; FSIZE in 1024-byte blocks), ID.out and ID.err (FIFOs
 * the host reads), ID.in (stdin, if any).
 *
 * The agent and its supervisors are not dumpable (the binary is also execute-only): commands,
 * which run as the same user, cannot ptrace them or open their descriptors through /proc to
 * forge events. As PID 1 it reaps every orphan the sandbox leaves.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int req_fd = -1, evt_fd = -1;
static const char *ctl = "/run/rollbox";

struct job {
    char id[32];
    pid_t pgid;
};
static struct job *jobs;
static size_t n_jobs, cap_jobs;

static int env_fd(const char *name) {
    const char *v = getenv(name);
    if (v == NULL || *v == '\0') return -1;
    char *end;
    long fd = strtol(v, &end, 10);
    return (*end == '\0' && fd >= 0 && fd < 1 << 20) ? (int)fd : -1;
}

static void write_all(int fd, const char *buf, size_t len) {
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0) {
            if (errno == EINTR) continue;
            return;
        }
        buf += n;
        len -= (size_t)n;
    }
}

static void event(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void event(const char *fmt, ...) {
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > 0) write_all(evt_fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

static void reap(int sig) {
    (void)sig;
    int saved = errno;
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
    errno = saved;
}

static struct job *find(const char *id) {
    for (size_t i = 0; i < n_jobs; i++)
        if (strcmp(jobs[i].id, id) == 0) return &jobs[i];
    return NULL;
}

static void forget(const char *id) {
    struct job *j = find(id);
    if (j != NULL) *j = jobs[--n_jobs];
}

static void remember(const char *id, pid_t pgid) {
    if (n_jobs == cap_jobs) {
        size_t cap = cap_jobs ? cap_jobs * 2 : 64;
        struct job *more = realloc(jobs, cap * sizeof *jobs);
        if (more == NULL) return; /* the command runs; it just cannot be killed by id */
        jobs = more;
        cap_jobs = cap;
    }
    snprintf(jobs[n_jobs].id, sizeof jobs[n_jobs].id, "%s", id);
    jobs[n_jobs++].pgid = pgid;
}

static char *path_of(const char *id, const char *suffix, char *buf, size_t size) {
    snprintf(buf, size, "%s/%s%s", ctl, id, suffix);
    return buf;
}

/* The whole request file, NUL-terminated (a line-oriented head, then NUL-separated strings). */
static char *slurp(const char *path, size_t *len) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    for (;;) {
        if (buf == NULL) break;
        if (n == cap) {
            char *more = realloc(buf, (cap *= 2) + 1);
            if (more == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = more;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            if (r < 0) {
                free(buf);
                buf = NULL;
            }
            break;
        }
        n += (size_t)r;
    }
    close(fd);
    if (buf != NULL) {
        buf[n] = '\0';
        *len = n;
    }
    return buf;
}

static char *next_line(char **p, char *end) {
    char *start = *p, *nl = memchr(start, '\n', (size_t)(end - start));
    if (nl == NULL) return NULL;
    *nl = '\0';
    *p = nl + 1;
    return start;
}

static void redirect(const char *path, int flags, int to) {
    int fd = open(path, flags | O_CLOEXEC);
    if (fd < 0) {
        dprintf(2, "rollbox: cannot open %s: %s\n", path, strerror(errno));
        _exit(126);
    }
    if (dup2(fd, to) < 0) _exit(126);
    close(fd);
}

static void set_limit(int resource, rlim_t value, const char *what) {
    struct rlimit r = {value, value};
    if (setrlimit(resource, &r) != 0)
        dprintf(2, "rollbox: cannot set the %s limit: %s\n", what, strerror(errno));
}

/* The command: stdio to the request's files, limits, cwd, exactly the environment asked for. */
static void command(const char *id, char *cwd, long cpu, long fsize, long nofile, char **argv,
                    char **envp) {
    char path[4096];
    path_of(id, ".in", path, sizeof path);
    redirect(access(path, F_OK) == 0 ? path : "/dev/null", O_RDONLY, 0);
    redirect(path_of(id, ".out", path, sizeof path), O_WRONLY, 1);
    redirect(path_of(id, ".err", path, sizeof path), O_WRONLY, 2);
    set_limit(RLIMIT_CPU, (rlim_t)cpu, "cpu");
    set_limit(RLIMIT_FSIZE, (rlim_t)fsize * 1024, "file size");
    set_limit(RLIMIT_NOFILE, (rlim_t)nofile, "open files");
    if (chdir(cwd) != 0) {
        dprintf(2, "rollbox: no such directory: %s\n", cwd);
        _exit(126);
    }
    environ = envp; /* execvp searches the PATH of the environment asked for */
    execvp(argv[0], argv);
    int err = errno;
    if (err == ENOENT) {
        dprintf(2, "rollbox: %s: command not found\n", argv[0]);
        _exit(127);
    }
    dprintf(2, "rollbox: %s: %s\n", argv[0], strerror(err));
    _exit(126);
}

/* The supervisor of one request: a process group of its own, ID.life held open while it lives;
 * runs the command, then reports its CPU time and status. */
static void supervise(const char *id) {
    char path[4096];
    signal(SIGCHLD, SIG_DFL); /* its own child is waited for below, not reaped behind its back */
    close(req_fd);
    int life = open(path_of(id, ".life", path, sizeof path), O_WRONLY | O_CLOEXEC);
    if (life < 0) _exit(1);
    size_t len = 0;
    char *req = slurp(path_of(id, ".req", path, sizeof path), &len);
    if (req == NULL) {
        event("done %s 126\n", id);
        _exit(0);
    }
    char *p = req, *end = req + len;
    char *cwd = next_line(&p, end), *lims = next_line(&p, end), *argc_s = next_line(&p, end);
    long cpu = 0, fsize = 0, nofile = 0, argc = 0;
    if (cwd == NULL || lims == NULL || argc_s == NULL ||
        sscanf(lims, "%ld %ld %ld", &cpu, &fsize, &nofile) != 3 ||
        sscanf(argc_s, "%ld", &argc) != 1 || argc < 1) {
        event("done %s 126\n", id);
        _exit(0);
    }
    /* the NUL-separated strings: argc of argv, the rest the environment */
    size_t n = 0;
    for (char *s = p; s < end; s += strlen(s) + 1) n++;
    if ((long)n < argc) {
        event("done %s 126\n", id);
        _exit(0);
    }
    char **strs = calloc(n + 2, sizeof *strs);
    if (strs == NULL) _exit(1);
    size_t i = 0;
    for (char *s = p; s < end; s += strlen(s) + 1) strs[i++] = s;
    char **argv = strs, **envp = strs + argc + 1;
    memmove(envp, strs + argc, (n - (size_t)argc) * sizeof *strs);
    argv[argc] = NULL;
    envp[n - (size_t)argc] = NULL;

    pid_t child = fork();
    if (child < 0) {
        event("done %s 126\n", id);
        _exit(0);
    }
    if (child == 0) {
        close(life);
        close(evt_fd);
        command(id, cwd, cpu, fsize, nofile, argv, envp);
    }
    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    while (wait4(child, &status, 0, &ru) < 0) {
        if (errno != EINTR) break;
    }
    int code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
    event("cpu %s %ld.%03ld %ld.%03ld\ndone %s %d\n", id, (long)ru.ru_utime.tv_sec,
          (long)ru.ru_utime.tv_usec / 1000, (long)ru.ru_stime.tv_sec,
          (long)ru.ru_stime.tv_usec / 1000, id, code);
    _exit(0);
}

static void run(const char *id) {
    pid_t pid = fork();
    if (pid < 0) {
        event("done %s 126\n", id);
        return;
    }
    if (pid == 0) {
        setpgid(0, 0);
        supervise(id);
    }
    setpgid(pid, pid); /* whichever of the two runs first */
    remember(id, pid);
}

static void handle(char *line) {
    char *verb = strtok(line, " \t"), *id = strtok(NULL, " \t");
    if (verb == NULL) return;
    if (strcmp(verb, "exit") == 0) exit(0);
    if (id == NULL || strlen(id) >= sizeof jobs->id) return;
    if (strcmp(verb, "run") == 0) {
        run(id);
    } else if (strcmp(verb, "kill") == 0) {
        struct job *j = find(id);
        if (j != NULL) kill(-j->pgid, SIGKILL);
        forget(id);
        event("killed %s\n", id);
    } else if (strcmp(verb, "forget") == 0) {
        forget(id);
    }
}

int main(void) {
    prctl(PR_SET_DUMPABLE, 0);
    int info = env_fd("RB_INFO_FD"), block = env_fd("RB_BLOCK_FD");
    if (info >= 0) close(info);
    if (block >= 0) close(block);
    req_fd = env_fd("RB_REQ_FD");
    evt_fd = env_fd("RB_EVT_FD");
    if (getenv("RB_CTL") != NULL) ctl = getenv("RB_CTL");
    if (req_fd < 0 || evt_fd < 0) {
        fprintf(stderr, "rollbox agent: RB_REQ_FD and RB_EVT_FD must name open descriptors\n");
        return 2;
    }
    /* commands must not inherit the agent's pipes: only supervisors (which fork, not exec) do */
    fcntl(req_fd, F_SETFD, FD_CLOEXEC);
    fcntl(evt_fd, F_SETFD, FD_CLOEXEC);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = reap;
    sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGCHLD, &sa, NULL);

    event("ready\n"); /* the container is set up: create() returns only now */
    char buf[65536];
    size_t have = 0;
    for (;;) {
        ssize_t n = read(req_fd, buf + have, sizeof buf - 1 - have);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break; /* the host is gone */
        have += (size_t)n;
        char *start = buf, *nl;
        while ((nl = memchr(start, '\n', have - (size_t)(start - buf))) != NULL) {
            *nl = '\0';
            handle(start);
            start = nl + 1;
        }
        have -= (size_t)(start - buf);
        memmove(buf, start, have);
        if (have == sizeof buf - 1) have = 0; /* a line longer than any request: dropped */
    }
    return 0;
}
