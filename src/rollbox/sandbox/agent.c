/* rollbox sandbox agent, compiled: PID 1 of a sandbox, started by bwrap.
 *
 * The protocol of agent.sh (the fallback where no C compiler is found), in one process that
 * starts in a fraction of bash's time and supervises every command itself: one fork per command,
 * no interpreter copied. Everything a command starts is its descendant, so it shares the
 * sandbox's namespaces, cgroups, dropped capabilities, seccomp filter and no-new-privs.
 *
 * Requests arrive on fd $RB_REQ_FD, one line each:   run ID  |  kill ID  |  forget ID  |  exit
 * Events go to fd $RB_EVT_FD, one line each:         cpu ID USER SYS, done ID STATUS, killed ID
 * STATUS is the exit status, or 128+N for a command ended by signal N (bash's convention).
 * A request's files are under $RB_CTL (read-only here): ID.req (cwd, "CPU FSIZE NOFILE", argc,
 * then argv and env NUL-separated; FSIZE in 1024-byte blocks), ID.out and ID.err (FIFOs the host
 * reads), ID.in (stdin, if any), ID.life (a FIFO held open until the command's report is sent,
 * so that the host sees a reporter that is gone without a report).
 *
 * Each command is a process group of its own (`kill ID` kills the group). Commands cannot stop
 * or kill their reporter: signals from inside a PID namespace do not reach its PID 1 unless it
 * handles them, and this one handles none but SIGCHLD (through a signalfd). It is not dumpable
 * (and its binary is execute-only), so commands, which run as the same user, cannot ptrace it or
 * open its descriptors through /proc to forge events. As PID 1 it reaps every orphan.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int req_fd = -1, evt_fd = -1;
static const char *ctl = "/run/rollbox";
static sigset_t chld_mask; /* SIGCHLD: blocked here, read through a signalfd */

struct job {
    char id[32];
    pid_t pgid;   /* the command's pid, leader of its process group; 0 if it never started */
    int running;  /* not reported yet (its pid cannot have been reused) */
    int life;     /* ID.life, held open until the report is sent; -1 after */
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

static struct job *find_id(const char *id) {
    for (size_t i = 0; i < n_jobs; i++)
        if (strcmp(jobs[i].id, id) == 0) return &jobs[i];
    return NULL;
}

static struct job *find_pid(pid_t pid) {
    for (size_t i = 0; i < n_jobs; i++)
        if (jobs[i].running && jobs[i].pgid == pid) return &jobs[i];
    return NULL;
}

static void forget(const char *id) {
    struct job *j = find_id(id);
    if (j == NULL) return;
    if (j->life >= 0) close(j->life);
    *j = jobs[--n_jobs];
}

static struct job *remember(const char *id) {
    if (n_jobs == cap_jobs) {
        size_t cap = cap_jobs ? cap_jobs * 2 : 64;
        struct job *more = realloc(jobs, cap * sizeof *jobs);
        if (more == NULL) return NULL;
        jobs = more;
        cap_jobs = cap;
    }
    struct job *j = &jobs[n_jobs++];
    snprintf(j->id, sizeof j->id, "%s", id);
    j->pgid = 0;
    j->running = 0;
    j->life = -1;
    return j;
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
    while (buf != NULL) {
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
        if (r < 0) {
            free(buf);
            buf = NULL;
        }
        if (r <= 0) break;
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

/* ---- in the child: the command --------------------------------------------------------- */

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

/* stdio to the request's files, limits, cwd, exactly the environment asked for, then exec. The
 * agent's own descriptors are all close-on-exec. */
static void command(const char *id, char *cwd, long cpu, long fsize, long nofile, char **argv,
                    char **envp) {
    char path[4096];
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL); /* the agent's blocked SIGCHLD is not for them */
    setpgid(0, 0);
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

/* ---- in the agent ---------------------------------------------------------------------- */

static void report(struct job *j, int status, const struct rusage *ru) {
    int code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
    event("cpu %s %ld.%03ld %ld.%03ld\ndone %s %d\n", j->id, (long)ru->ru_utime.tv_sec,
          (long)ru->ru_utime.tv_usec / 1000, (long)ru->ru_stime.tv_sec,
          (long)ru->ru_stime.tv_usec / 1000, j->id, code);
    if (j->life >= 0) close(j->life); /* after the report: the host reads the events first */
    j->life = -1;
    j->running = 0; /* its group may live on (background children): kill ID still reaches it */
}

/* A request that cannot be run: reported as exit 126 at once. */
static void refuse(struct job *j) {
    struct rusage none;
    memset(&none, 0, sizeof none);
    report(j, 126 << 8, &none);
}

static void run(const char *id) {
    char path[4096];
    if (find_id(id) != NULL) return; /* ids are the host's, and never reused */
    struct job *j = remember(id);
    if (j == NULL) {
        event("done %s 126\n", id);
        return;
    }
    /* non-blocking: without the host's reader it fails at once instead of hanging the agent */
    j->life = open(path_of(id, ".life", path, sizeof path), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    size_t len = 0;
    char *req = slurp(path_of(id, ".req", path, sizeof path), &len);
    if (req == NULL) {
        refuse(j);
        return;
    }
    char *p = req, *end = req + len;
    char *cwd = next_line(&p, end), *lims = next_line(&p, end), *argc_s = next_line(&p, end);
    long cpu = 0, fsize = 0, nofile = 0, argc = 0;
    size_t n = 0;
    for (char *s = p; s < end; s += strlen(s) + 1) n++;
    if (cwd == NULL || lims == NULL || argc_s == NULL ||
        sscanf(lims, "%ld %ld %ld", &cpu, &fsize, &nofile) != 3 ||
        sscanf(argc_s, "%ld", &argc) != 1 || argc < 1 || (long)n < argc) {
        free(req);
        refuse(j);
        return;
    }
    /* the NUL-separated strings: argc of argv, the rest the environment, each NULL-ended */
    char **strs = calloc(n + 2, sizeof *strs);
    if (strs == NULL) {
        free(req);
        refuse(j);
        return;
    }
    size_t i = 0;
    for (char *s = p; s < end; s += strlen(s) + 1) strs[i++] = s;
    char **argv = strs, **envp = strs + argc + 1;
    memmove(envp, strs + argc, (n - (size_t)argc) * sizeof *strs);
    argv[argc] = NULL;
    envp[n - (size_t)argc] = NULL;

    pid_t pid = fork();
    if (pid == 0) command(id, cwd, cpu, fsize, nofile, argv, envp);
    free(strs);
    free(req);
    if (pid < 0) {
        refuse(j);
        return;
    }
    setpgid(pid, pid); /* whichever of the two runs first */
    j->pgid = pid;
    j->running = 1;
}

static void reap(void) {
    int status;
    struct rusage ru;
    pid_t pid;
    while ((pid = wait4(-1, &status, WNOHANG, &ru)) > 0) {
        struct job *j = find_pid(pid);
        if (j != NULL) report(j, status, &ru); /* else an orphan the sandbox left: reaped */
    }
}

static void handle(char *line) {
    char *verb = strtok(line, " \t"), *id = strtok(NULL, " \t");
    if (verb == NULL) return;
    if (strcmp(verb, "exit") == 0) exit(0);
    if (id == NULL || strlen(id) >= sizeof jobs->id) return;
    if (strcmp(verb, "run") == 0) {
        run(id);
    } else if (strcmp(verb, "kill") == 0) {
        struct job *j = find_id(id);
        if (j != NULL && j->pgid > 0) kill(-j->pgid, SIGKILL);
        event("killed %s\n", id);
        forget(id); /* its exit, when reaped, is not reported: "killed" was */
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
    /* commands must not inherit the agent's descriptors */
    fcntl(req_fd, F_SETFD, FD_CLOEXEC);
    fcntl(evt_fd, F_SETFD, FD_CLOEXEC);
    sigemptyset(&chld_mask);
    sigaddset(&chld_mask, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld_mask, NULL);
    int sig_fd = signalfd(-1, &chld_mask, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sig_fd < 0) {
        perror("rollbox agent: signalfd");
        return 2;
    }

    event("ready\n"); /* the container is set up: create() returns only now */
    char buf[65536];
    size_t have = 0;
    struct pollfd fds[2] = {{.fd = req_fd, .events = POLLIN}, {.fd = sig_fd, .events = POLLIN}};
    for (;;) {
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            return 1;
        }
        if (fds[1].revents & POLLIN) {
            struct signalfd_siginfo si;
            while (read(sig_fd, &si, sizeof si) == sizeof si) {
            }
            reap();
        }
        if (!(fds[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
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
