package fakegithub

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// request is one API call, its path split into unescaped segments (after
// /api/v3/).
type request struct {
	method string
	seg    []string
	query  url.Values
	body   []byte
	self   string      // the URL without its query, for Link headers
	header http.Header // the response's
}

type errorBody struct {
	Message string       `json:"message"`
	Errors  []fieldError `json:"errors,omitempty"`
	DocURL  string       `json:"documentation_url"`
}

type fieldError struct {
	Resource string `json:"resource"`
	Code     string `json:"code"`
	Field    string `json:"field"`
}

func apiError(msg string) errorBody {
	return errorBody{Message: msg, DocURL: "https://docs.github.com/rest"}
}

func notFound() (int, any) { return http.StatusNotFound, apiError("Not Found") }

func invalid(resource, code, field string) (int, any) {
	e := apiError("Validation Failed")
	e.Errors = []fieldError{{Resource: resource, Code: code, Field: field}}
	return http.StatusUnprocessableEntity, e
}

func badJSON() (int, any) { return http.StatusBadRequest, apiError("Problems parsing JSON") }

func notAllowed() (int, any) { return http.StatusMethodNotAllowed, apiError("Method Not Allowed") }

// route answers req. s.mu is held.
func (s *Server) route(req *request) (int, any) {
	seg := req.seg
	if len(seg) == 1 && seg[0] == "user" && req.method == http.MethodGet {
		return http.StatusOK, map[string]any{"login": s.opt.User, "id": 1, "type": "User"}
	}
	if len(seg) < 3 || seg[0] != "repos" {
		return notFound()
	}
	r := s.repo(seg[1], seg[2])
	if r == nil {
		return notFound()
	}
	rest := seg[3:]
	if len(rest) == 0 {
		if req.method != http.MethodGet {
			return notAllowed()
		}
		return http.StatusOK, s.repoJSON(r)
	}
	switch rest[0] {
	case "issues":
		return s.issues(req, r, rest[1:])
	case "labels":
		return s.labels(req, r, rest[1:])
	case "milestones":
		return s.milestones(req, r, rest[1:])
	}
	return notFound()
}

// pageRange is the slice of a list one page shows.
type pageRange struct{ from, to int }

// paginate reads per_page and page, sets the Link header and returns the
// page's range of a list of n.
func paginate(req *request, n int) pageRange {
	per, err := strconv.Atoi(req.query.Get("per_page"))
	if err != nil || per <= 0 {
		per = 30
	}
	per = min(per, 100)
	page, err := strconv.Atoi(req.query.Get("page"))
	if err != nil || page <= 0 {
		page = 1
	}
	last := max(1, (n+per-1)/per)
	link := func(p int, rel string) string {
		q := url.Values{}
		for k, v := range req.query {
			q[k] = v
		}
		q.Set("page", strconv.Itoa(p))
		q.Set("per_page", strconv.Itoa(per))
		return fmt.Sprintf("<%s?%s>; rel=%q", req.self, q.Encode(), rel)
	}
	var links []string
	if page < last {
		links = append(links, link(page+1, "next"), link(last, "last"))
	}
	if page > 1 {
		links = append(links, link(1, "first"), link(page-1, "prev"))
	}
	if len(links) > 0 {
		req.header.Set("Link", strings.Join(links, ", "))
	}
	from := min((page-1)*per, n)
	return pageRange{from: from, to: min(from+per, n)}
}
