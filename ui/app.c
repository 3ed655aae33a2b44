/* The curses main loop: poll stdin and the job wake pipe, apply events, redraw
 * at most refresh_hz times a second after anything changed (every event,
 * the end of a job included; the clock and the meter once a second). Only
 * this thread calls curses; it never waits on a job. */
#define NCURSES_WIDECHAR 1
#include "app.h"

#include <curses.h>
#include <term.h>
#include <errno.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/signals.h"
#include "core/clock.h"
#include "core/error.h"
#include "curses_blit.h"
#include "keys.h"
#include "persist/persist.h"
#include "ui.h"
#include "workbench/session.h"

static int translate_key(int ch) {
    switch (ch) {
    case KEY_UP: return UK_UP;
    case KEY_DOWN: return UK_DOWN;
    case KEY_LEFT: return UK_LEFT;
    case KEY_RIGHT: return UK_RIGHT;
    case '\t': return UK_TAB;
    case KEY_BTAB: return UK_BTAB;
    case '\n':
    case '\r':
    case KEY_ENTER: return UK_ENTER;
    case 27: return UK_ESC;
    case KEY_PPAGE: return UK_PGUP;
    case KEY_NPAGE: return UK_PGDN;
    case KEY_HOME: return UK_HOME;
    case KEY_END: return UK_END;
    case KEY_F(1): return UK_F1;
    case KEY_F(10): return UK_F10;
    case KEY_BACKSPACE:
    case 127: return UK_BACKSPACE;
    }
    return ch;
}

static bool drain_events(app_state *st, job_runner *jr) {
    bool changed = false;
    job_clear_wake(jr);
    event *ev = gf_malloc(sizeof *ev); /* about 1.5 kB */
    while (job_pop_event(jr, ev)) changed |= app_apply_event(st, ev);
    free(ev);
    return changed;
}

int ui_terminal_check(char *why, size_t n) {
    const char *term = getenv("TERM");
    int err = 0;
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        snprintf(why, n, "the workbench needs a terminal on stdin and stdout (scripts: use the other subcommands, or --snapshot)");
        return -1;
    }
    if (!term || !term[0]) {
        snprintf(why, n, "TERM is not set: the workbench needs a terminal that can move the cursor (e.g. TERM=xterm-256color)");
        return -1;
    }
    if (setupterm(NULL, STDOUT_FILENO, &err) != OK) {
        snprintf(why, n, "the terminal TERM=%s is unknown here (try TERM=xterm-256color)", term);
        return -1;
    }
    const char *cup = tigetstr("cup");
    bool ok = cup && cup != (const char *)-1;
    del_curterm(cur_term);
    if (!ok) {
        snprintf(why, n, "the terminal TERM=%s cannot move the cursor; use another terminal, graft's other "
                         "commands, or graft tui --snapshot", term);
        return -1;
    }
    return 0;
}

/* Every way out restores the terminal (endwin leaves the alternate screen), an exit()
 * from deep inside included. */
static bool curses_on;
static void restore_terminal(void) {
    if (curses_on && !isendwin()) endwin();
    curses_on = false;
}

/* A hang-up (the terminal closed, ssh dropped) ends the workbench like q would: the job's
 * progress and the session saved, then the process ends by SIGHUP. */
static void on_hangup(int sig) { cli_record_stop(sig); }
static void catch_hangup(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_hangup;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGHUP, &sa, NULL);
}

/* The session on disk: after a job ends or anything saved with it changes (within a second), and
 * while a job runs every SAVE_RUNNING_S (where it got to, for a workbench killed outright). */
#define SAVE_RUNNING_S 10.0
static void autosave(app_state *st, double now, double *last_save) {
    bool running_stale = st->job.active && now - *last_save >= SAVE_RUNNING_S;
    if (!(st->session_dirty && now - *last_save >= 1.0) && !running_stale) return; /* at most once a second */
    *last_save = now;
    if (persist_save_session(st) != 0) {
        app_log(st, LOG_WARN, "warning: the session was not saved: %s", gf_last_error());
        st->session_dirty = false; /* said once; the next change tries again */
    }
}

/* Reads every pending key / mouse / resize; returns true when the frame changed. */
static bool read_input(ui *u, grid *g) {
    bool changed = false;
    int ch;
    while ((ch = getch()) != ERR) {
        if (ch == KEY_RESIZE) {
            grid_resize(g, COLS, LINES);
            clearok(curscr, TRUE);
            changed = true;
        } else if (ch == KEY_MOUSE) {
            MEVENT me;
            if (getmouse(&me) != OK) continue;
            if (me.bstate & BUTTON4_PRESSED) changed |= ui_wheel(u, -1, me.x, me.y);
#ifdef BUTTON5_PRESSED
            else if (me.bstate & BUTTON5_PRESSED) changed |= ui_wheel(u, 1, me.x, me.y);
#endif
            else if (me.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED | BUTTON1_RELEASED))
                changed |= ui_click(u, me.x, me.y);
        } else {
            changed |= ui_key(u, translate_key(ch));
        }
        if (u->quit) break;
    }
    return changed;
}

int ui_run(app_state *st, job_runner *jr, ui_prefs *prefs) {
    setlocale(LC_ALL, "");
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
        return gf_fail("the workbench needs a terminal on stdin and stdout (scripts: use the other subcommands, or --snapshot)");
    SCREEN *scr = newterm(NULL, stdout, stdin);
    if (!scr) return gf_fail("cannot start the terminal UI (TERM=%s)", getenv("TERM") ? getenv("TERM") : "unset");
    set_term(scr);
    curses_on = true;
    atexit(restore_terminal);
    cbreak();
    noecho();
    keypad(stdscr, TRUE);
    nodelay(stdscr, TRUE);
    set_escdelay(25);
    curs_set(0);
    mmask_t wheel = BUTTON4_PRESSED;
#ifdef BUTTON5_PRESSED
    wheel |= BUTTON5_PRESSED;
#endif
    mousemask(BUTTON1_PRESSED | BUTTON1_CLICKED | BUTTON1_RELEASED | wheel, NULL);
    mouseinterval(0);
    const char *nc = getenv("NO_COLOR");
    int n_colors = 0;
    if (has_colors() && !(nc && nc[0])) {
        start_color();
        use_default_colors();
        n_colors = COLORS;
    }
    theme th = {.palette = prefs->palette};
    theme_detect(&th, n_colors);
    ui u;
    ui_init(&u, st, jr, prefs, th);
    grid g;
    grid_init(&g, COLS, LINES);
    int hz = prefs->refresh_hz > 0 && prefs->refresh_hz <= 30 ? prefs->refresh_hz : 30;
    double frame = 1.0 / hz, last_draw = 0, last_tick = 0;
    bool dirty = true;
    long seen_log = st->log.total;
    meter_sample(&u.meter, clock_now_s(), 0);
    /* GRAFT_UI_TRACE=FILE: one line per frame with its timings (for benchmarks) */
    const char *trace_path = getenv("GRAFT_UI_TRACE");
    FILE *trace = trace_path && trace_path[0] ? fopen(trace_path, "w") : NULL;
    if (trace) setvbuf(trace, NULL, _IOLBF, 0);
    cli_catch_stop_signals(); /* Ctrl-C quits like q: terminal restored, session saved, then exit 130 */
    catch_hangup();
    double last_save = clock_now_s();
    while (!u.quit && !atomic_load(cli_stop_flag())) {
        int timeout_ms = 1000;
        if (dirty) {
            double wait = last_draw + frame - clock_now_s();
            timeout_ms = wait > 0 ? (int)(wait * 1000) + 1 : 0;
        }
        struct pollfd fds[2] = {{.fd = STDIN_FILENO, .events = POLLIN}, {.fd = job_wake_fd(jr), .events = POLLIN}};
        int pr = poll(fds, 2, timeout_ms);
        if (pr < 0 && errno != EINTR) break;
        if (fds[0].revents & (POLLHUP | POLLERR | POLLNVAL)) break; /* the terminal went away */
        u.now = clock_now_s();
        if (fds[1].revents & POLLIN && drain_events(st, jr)) {
            dirty = true; /* every event redraws, a job's end and a cancel included */
            u.last_event = u.now;
        }
        if (u.now - last_tick >= 1.0) { /* the clock: elapsed time, ETA, staleness, the meter */
            last_tick = u.now;
            app_job_tick(st, u.now);
            meter_sample(&u.meter, u.now, 0.9);
            dirty = true;
        }
        dirty |= read_input(&u, &g); /* also after EINTR: SIGWINCH queues KEY_RESIZE */
        autosave(st, u.now, &last_save);
        if (st->log.total != seen_log) {
            seen_log = st->log.total;
            dirty = true;
        }
        if (dirty && clock_now_s() - last_draw >= frame) {
            double t0 = clock_now_s();
            ui_render(&u, &g);
            double t1 = clock_now_s();
            curses_blit(&g, n_colors > 0);
            last_draw = clock_now_s();
            dirty = false;
            if (trace) /* wake to frame on the terminal, render, blit (ms) */
                fprintf(trace, "%.3f %.3f %.3f\n", (last_draw - u.now) * 1e3, (t1 - t0) * 1e3, (last_draw - t1) * 1e3);
        }
    }
    if (trace) fclose(trace);
    /* not the user's q: a signal or the terminal gone; a running job is interrupted, not cancelled */
    bool interrupted = !u.quit && app_mark_interrupted(st);
    if (interrupted) persist_save_session(st); /* first, in case the job takes its time to stop */
    restore_terminal();
    delscreen(scr);
    grid_free(&g);
    if (job_running(jr)) {
        job_cancel(jr); /* a race checkpoints as it stops */
        job_wait(jr);
        drain_events(st, jr);
    }
    persist_save_settings(prefs);
    if (persist_save_session(st) != 0) fprintf(stderr, "graft: warning: the session was not saved: %s\n", gf_last_error());
    return 0;
}
