#!/usr/bin/env python3
"""fake_debuginfod.py - a debuginfod server that misbehaves (t_debuginfod.sh).

usage: fake_debuginfod.py PORTFILE slow
       fake_debuginfod.py PORTFILE file PATH

Listens on 127.0.0.1, on a port the kernel picks, and writes that port to
PORTFILE once it accepts connections. Every GET is answered:
  slow  never: the handler sleeps 60 s before answering anything (a server
        that accepted the connection and hangs);
  file  with 200 and the bytes of PATH, whatever was asked (random bytes,
        or an ELF file of another build: answers a client must reject).
"""
import http.server
import os
import sys
import time


def main():
    portfile, mode = sys.argv[1], sys.argv[2]
    data = open(sys.argv[3], "rb").read() if mode == "file" else b""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if mode == "slow":
                time.sleep(60)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    tmp = portfile + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, portfile)
    srv.serve_forever()


if __name__ == "__main__":
    main()
