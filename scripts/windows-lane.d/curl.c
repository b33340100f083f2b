/* Test stand-in for scripts/windows-lane only, never shipped: a curl.exe for wine, which
 * has none (Windows 10+ ships one; no Windows build of curl is packaged for Debian).
 * Speaks just enough of curl's command line for src/remote/curl.rs: one plain HTTP/1.0
 * GET to a numeric IPv4 host (the lane's loopback server), the body on stdout, --fail
 * (exit 22 on a status >= 400) and --write-out with %{stderr}, %{stdout}, %{http_code},
 * %{remote_ip}, %{redirect_url} and \n. Every other option is accepted and ignored. */
#include <winsock2.h>
#include <ws2tcpip.h>
#include <fcntl.h>
#include <io.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *with_value[] = {"--proto", "--max-filesize", "--max-time",
                                   "--connect-timeout", "--speed-limit", "--speed-time",
                                   "--user-agent", "-A", "-m", NULL};

static void write_out(const char *fmt, int code, const char *ip, const char *location) {
  FILE *out = stdout;
  for (const char *p = fmt; *p; p++) {
    if (p[0] == '\\' && p[1] == 'n') { fputc('\n', out); p++; continue; }
    if (p[0] == '%' && p[1] == '{') {
      const char *end = strchr(p, '}');
      if (end) {
        size_t n = (size_t)(end - p - 2);
        const char *name = p + 2;
        if (n == 6 && !strncmp(name, "stderr", n)) { fflush(out); out = stderr; }
        else if (n == 6 && !strncmp(name, "stdout", n)) { fflush(out); out = stdout; }
        else if (n == 9 && !strncmp(name, "http_code", n)) fprintf(out, "%03d", code);
        else if (n == 9 && !strncmp(name, "remote_ip", n)) fputs(ip, out);
        else if (n == 12 && !strncmp(name, "redirect_url", n)) fputs(location, out);
        p = end;
        continue;
      }
    }
    fputc(*p, out);
  }
  fflush(out);
}

int main(int argc, char **argv) {
  const char *url = NULL, *fmt = NULL;
  int fail = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--url") && i + 1 < argc) { url = argv[++i]; continue; }
    if ((!strcmp(a, "--write-out") || !strcmp(a, "-w")) && i + 1 < argc) { fmt = argv[++i]; continue; }
    if (!strcmp(a, "--fail") || !strcmp(a, "-f")) { fail = 1; continue; }
    int skip = 0;
    for (const char **w = with_value; *w; w++) if (!strcmp(a, *w)) skip = 1;
    if (skip) { i++; continue; }
    if (a[0] != '-') url = a;
  }
  _setmode(_fileno(stdout), _O_BINARY);
  if (!url || strncmp(url, "http://", 7)) {
    fprintf(stderr, "curl (stand-in): only http:// URLs\n");
    return 1;
  }
  char host[256] = "", path[4096] = "/";
  int port = 80;
  const char *h = url + 7, *slash = strchr(h, '/');
  size_t hl = slash ? (size_t)(slash - h) : strlen(h);
  if (hl >= sizeof host) return 3;
  memcpy(host, h, hl);
  host[hl] = 0;
  if (slash) snprintf(path, sizeof path, "%s", slash);
  char *colon = strchr(host, ':');
  if (colon) { *colon = 0; port = atoi(colon + 1); }

  WSADATA wsa;
  if (WSAStartup(MAKEWORD(2, 2), &wsa)) return 2;
  struct sockaddr_in addr = {0};
  addr.sin_family = AF_INET;
  addr.sin_port = htons((u_short)port);
  if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) {
    fprintf(stderr, "curl: (6) Could not resolve host: %s\n", host);
    return 6;
  }
  SOCKET s = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
  if (s == INVALID_SOCKET || connect(s, (struct sockaddr *)&addr, sizeof addr)) {
    fprintf(stderr, "curl: (7) Failed to connect to %s port %d\n", host, port);
    if (fmt) write_out(fmt, 0, "", "");
    return 7;
  }
  char req[8192];
  int rl = snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: %s:%d\r\nConnection: close\r\n\r\n",
                    path, host, port);
  send(s, req, rl, 0);

  /* Headers first (kept), then the body streamed to stdout. */
  char head[65536];
  size_t have = 0;
  char *body = NULL;
  int n;
  while (!body && have < sizeof head - 1 && (n = recv(s, head + have, (int)(sizeof head - 1 - have), 0)) > 0) {
    have += (size_t)n;
    head[have] = 0;
    body = strstr(head, "\r\n\r\n");
  }
  if (!body) {
    fprintf(stderr, "curl: (52) Empty reply from server\n");
    if (fmt) write_out(fmt, 0, host, "");
    return 52;
  }
  *body = 0;
  body += 4;
  size_t body_have = have - (size_t)(body - head);
  int code = 0;
  sscanf(head, "HTTP/%*s %d", &code);
  char location[4096] = "";
  for (char *line = strstr(head, "\r\n"); line; line = strstr(line + 2, "\r\n")) {
    if (!_strnicmp(line + 2, "Location:", 9)) {
      const char *v = line + 11;
      while (*v == ' ') v++;
      size_t vl = strcspn(v, "\r");
      if (vl >= sizeof location) vl = sizeof location - 1;
      memcpy(location, v, vl);
      location[vl] = 0;
    }
  }
  int failed = fail && code >= 400;
  if (!failed) {
    fwrite(body, 1, body_have, stdout);
    char buf[65536];
    while ((n = recv(s, buf, sizeof buf, 0)) > 0) fwrite(buf, 1, (size_t)n, stdout);
    fflush(stdout);
  } else {
    fprintf(stderr, "curl: (22) The requested URL returned error: %d\n", code);
  }
  closesocket(s);
  if (fmt) write_out(fmt, code, host, location);
  WSACleanup();
  return failed ? 22 : 0;
}
