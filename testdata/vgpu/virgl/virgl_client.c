// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * The virgl rig's GLES client: a real Mesa userspace (EGL on GBM, surfaceless context, an
 * FBO) driving the upstream virtio_gpu driver through its render node, and its own oracle.
 *
 *   virgl_client FRAMES INFLIGHT LOG
 *
 * Renders FRAMES frames; each is a clear plus one draw followed by glFlush (Mesa's virgl
 * winsys turns the flush into one DRM_IOCTL_VIRTGPU_EXECBUFFER carrying a SUBMIT_3D command
 * and a fence). After every INFLIGHT frames one glFinish waits for all of them: INFLIGHT=1
 * is draw + glFinish per frame, INFLIGHT=8 keeps eight jobs in flight. Per frame LOG gets
 *
 *   frame=I batch=B inflight=K pid=P tid=T trace_id=HEX span_id=HEX begin_ns=A flush_ns=F finish_ns=E
 *
 * with CLOCK_MONOTONIC (the clock of the guest's tracefs, trace_clock=mono) read right
 * before the frame's first GL call (A), right after its glFlush returned (F) and right
 * after the glFinish that waited for it (E, the same for every frame of a batch). The job
 * of frame I was submitted within [A, F] and had signalled by E.
 *
 * Trace context: with TRACEPARENT in the environment (00-<trace>-<span>-<flags>) its trace
 * id is the client's; else a fixed one. During each frame the thread publishes an OTEP 4947
 * record (otel_thread_ctx_v1, exported TLS) whose span id is the frame's own
 * (span_id in LOG); between frames the record is marked invalid.
 *
 * VIRGL_READY_DIR: after EGL/GBM set-up (whose ioctls make the receiver see the process)
 * and before the first frame, wait up to 10 s for VIRGL_READY_DIR/<pid> (the guest's
 * init creates it once `ghostdriver live --verbose` says the process is in its kernel
 * table); "ready=yes|no" goes to stderr.
 */
#define _GNU_SOURCE
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GLES2/gl2.h>
#include <fcntl.h>
#include <gbm.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct otel_thread_ctx {
	uint8_t trace_id[16];
	uint8_t span_id[8];
	uint8_t valid;
	uint8_t flags;
	uint16_t attrs_size;
	uint8_t attrs[16];
} __attribute__((packed));

__attribute__((visibility("default"), used)) __thread struct otel_thread_ctx *otel_thread_ctx_v1;

static struct otel_thread_ctx ctx;

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "virgl_client: %s (egl 0x%x, gl 0x%x)\n", what, eglGetError(), glGetError());
	exit(1);
}

static void hex(char *out, const uint8_t *b, int n)
{
	for (int i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

static int unhex(uint8_t *out, const char *s, int n)
{
	for (int i = 0; i < n; i++) {
		unsigned v;
		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = v;
	}
	return 0;
}

static GLuint shader(GLenum type, const char *src)
{
	GLuint s = glCreateShader(type);
	GLint ok = 0;
	glShaderSource(s, 1, &src, NULL);
	glCompileShader(s);
	glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
	if (!ok)
		die("shader compile");
	return s;
}

static void wait_ready(void)
{
	const char *dir = getenv("VIRGL_READY_DIR");
	char path[256];
	struct stat st;
	if (!dir || !*dir)
		return;
	snprintf(path, sizeof(path), "%s/%d", dir, getpid());
	for (int i = 0; i < 200; i++) {
		if (stat(path, &st) == 0) {
			fprintf(stderr, "ready=yes after %d ms\n", i * 50);
			return;
		}
		usleep(50000);
	}
	fprintf(stderr, "ready=no\n");
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s FRAMES INFLIGHT LOG\n", argv[0]);
		return 2;
	}
	int frames = atoi(argv[1]), inflight = atoi(argv[2]);
	if (frames < 1 || inflight < 1)
		return 2;
	FILE *log = fopen(argv[3], "a");
	if (!log)
		die("open log");

	/* The client's trace: TRACEPARENT's trace id, else a fixed one. */
	const char *tp = getenv("TRACEPARENT");
	memcpy(ctx.trace_id, "\x4b\xf9\x2f\x35\x77\xb3\x4d\xa6\xa3\xce\x92\x9d\x0e\x0e\x47\x36", 16);
	if (tp && strlen(tp) >= 55 && unhex(ctx.trace_id, tp + 3, 16) != 0)
		die("bad TRACEPARENT");
	ctx.flags = 1;
	otel_thread_ctx_v1 = &ctx;

	int fd = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		die("open /dev/dri/renderD128");
	struct gbm_device *gbm = gbm_create_device(fd);
	if (!gbm)
		die("gbm_create_device");
	PFNEGLGETPLATFORMDISPLAYEXTPROC get_display =
		(PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
	if (!get_display)
		die("no eglGetPlatformDisplayEXT");
	EGLDisplay dpy = get_display(EGL_PLATFORM_GBM_KHR, gbm, NULL);
	EGLint maj, min;
	if (dpy == EGL_NO_DISPLAY || !eglInitialize(dpy, &maj, &min))
		die("eglInitialize");
	if (!eglBindAPI(EGL_OPENGL_ES_API))
		die("eglBindAPI");
	static const EGLint cattr[] = {EGL_CONTEXT_CLIENT_VERSION, 2, EGL_NONE};
	EGLContext egl = eglCreateContext(dpy, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, cattr);
	if (egl == EGL_NO_CONTEXT)
		die("eglCreateContext (surfaceless, no config)");
	if (!eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, egl))
		die("eglMakeCurrent");
	fprintf(stderr, "EGL %d.%d GL_VENDOR=%s GL_RENDERER=%s GL_VERSION=%s\n", maj, min,
		glGetString(GL_VENDOR), glGetString(GL_RENDERER), glGetString(GL_VERSION));

	/* An offscreen 256x256 RGBA target: no page flips, only the render jobs. */
	GLuint fbo, rb;
	glGenRenderbuffers(1, &rb);
	glBindRenderbuffer(GL_RENDERBUFFER, rb);
	glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA4, 256, 256);
	glGenFramebuffers(1, &fbo);
	glBindFramebuffer(GL_FRAMEBUFFER, fbo);
	glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, rb);
	if (glCheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE)
		die("framebuffer incomplete");
	glViewport(0, 0, 256, 256);

	GLuint prog = glCreateProgram();
	glAttachShader(prog, shader(GL_VERTEX_SHADER,
				    "attribute vec2 p; uniform float a;\n"
				    "void main() { float c = cos(a), s = sin(a);\n"
				    "  gl_Position = vec4(c * p.x - s * p.y, s * p.x + c * p.y, 0.0, 1.0); }\n"));
	glAttachShader(prog, shader(GL_FRAGMENT_SHADER,
				    "precision mediump float; uniform float b;\n"
				    "void main() { gl_FragColor = vec4(0.5 + 0.5 * sin(b), 0.3, 0.7, 1.0); }\n"));
	glBindAttribLocation(prog, 0, "p");
	glLinkProgram(prog);
	GLint ok = 0;
	glGetProgramiv(prog, GL_LINK_STATUS, &ok);
	if (!ok)
		die("program link");
	glUseProgram(prog);
	GLint ua = glGetUniformLocation(prog, "a"), ub = glGetUniformLocation(prog, "b");
	static const GLfloat tri[] = {0.0f, 0.8f, -0.7f, -0.6f, 0.7f, -0.6f};
	GLuint vbo;
	glGenBuffers(1, &vbo);
	glBindBuffer(GL_ARRAY_BUFFER, vbo);
	glBufferData(GL_ARRAY_BUFFER, sizeof(tri), tri, GL_STATIC_DRAW);
	glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 0, 0);
	glEnableVertexAttribArray(0);
	glFinish(); /* set-up's own submits end here, before the first frame */

	wait_ready();

	int pid = getpid(), tid = (int)syscall(SYS_gettid);
	char trace[33], span[17];
	hex(trace, ctx.trace_id, 16);
	int64_t *begin = calloc(inflight, sizeof(int64_t)), *flush = calloc(inflight, sizeof(int64_t));
	uint64_t *spans = calloc(inflight, sizeof(uint64_t));
	for (int f = 0; f < frames; f += inflight) {
		int n = frames - f < inflight ? frames - f : inflight;
		for (int i = 0; i < n; i++) {
			uint64_t sid = 0x1000000000000000ull | (uint64_t)(f + i + 1);
			for (int b = 0; b < 8; b++)
				ctx.span_id[b] = sid >> (56 - 8 * b);
			spans[i] = sid;
			ctx.valid = 1;
			begin[i] = now_ns();
			glClearColor((f + i) % 7 / 7.0f, 0.2f, 0.2f, 1.0f);
			glClear(GL_COLOR_BUFFER_BIT);
			glUniform1f(ua, (f + i) * 0.05f);
			glUniform1f(ub, (f + i) * 0.1f);
			glDrawArrays(GL_TRIANGLES, 0, 3);
			glFlush();
			flush[i] = now_ns();
			ctx.valid = 0;
		}
		glFinish();
		int64_t end = now_ns();
		for (int i = 0; i < n; i++) {
			snprintf(span, sizeof(span), "%016llx", (unsigned long long)spans[i]);
			fprintf(log,
				"frame=%d batch=%d inflight=%d pid=%d tid=%d trace_id=%s span_id=%s begin_ns=%lld flush_ns=%lld finish_ns=%lld\n",
				f + i, f / inflight, inflight, pid, tid, trace, span, (long long)begin[i],
				(long long)flush[i], (long long)end);
		}
	}
	if (glGetError() != GL_NO_ERROR)
		die("GL error");
	fclose(log);
	eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
	eglDestroyContext(dpy, egl);
	eglTerminate(dpy);
	gbm_device_destroy(gbm);
	close(fd);
	return 0;
}
