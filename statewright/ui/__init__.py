"""The local web page, `statewright ui` (DESIGN section 5, "Web page"): runs, each run's state
on its graph, its counters, transitions and history, and the approvals waiting for a human,
decided from the page with the secret only the human who started it has.

- `guard.py`: who may use the page (the secret, Host and Origin checks, security headers);
- `app.py`: the routes, calling `statewright.runtime.Runtime`;
- `pages.py`: the HTML, rendered and escaped on the server;
- `diagram.py`: the workflow drawn as SVG (a layered layout, no library);
- `server.py`: binding 127.0.0.1, printing the sign-in link, the address file;
- `static/`: the page's one script and one style sheet.

Imported only by the `ui` command (starlette and uvicorn load with it).
"""
