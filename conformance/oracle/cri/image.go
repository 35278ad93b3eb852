package cri

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/kubernetes/pkg/util/parsers"

	"github.com/nodestate/nodestate/podlifecycle/simruntime"
)

// ImageService is the image service of the CRI
// (runtimeapi.ImageServiceServer) of a Runtime. The node starts with no
// images; a pull that succeeds stores its image for every pod of the node,
// so IfNotPresent finds it from then on and Always pulls again. Get it from
// Runtime.Images; it is safe for concurrent use.
type ImageService struct {
	runtimeapi.UnimplementedImageServiceServer
	rt *Runtime
}

// imageRecord is a stored image: its reference as pulled, its ID
// ("sha256:<hex>", from the reference) and its digest reference
// ("<repository>@sha256:<hex>").
type imageRecord struct {
	name, id, digest string
	size             uint64
}

func newImageRecord(name string, size int64) *imageRecord {
	sum := sha256.Sum256([]byte(name))
	h := hex.EncodeToString(sum[:])
	repo := name
	if i := strings.LastIndex(repo, "@"); i >= 0 {
		repo = repo[:i]
	} else if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	return &imageRecord{name: name, id: "sha256:" + h, digest: repo + "@sha256:" + h, size: uint64(size)}
}

func (im *imageRecord) api() *runtimeapi.Image {
	return &runtimeapi.Image{Id: im.id, RepoTags: []string{im.name}, RepoDigests: []string{im.digest}, Size: im.size,
		Spec: &runtimeapi.ImageSpec{Image: im.name}}
}

// sameImage reports whether two references name the same image once
// normalized ("busybox" and "docker.io/library/busybox:latest").
func sameImage(a, b string) bool {
	if a == b {
		return true
	}
	ra, ta, da, err := parsers.ParseImageName(a)
	if err != nil {
		return false
	}
	rb, tb, db, err := parsers.ParseImageName(b)
	return err == nil && ra == rb && ta == tb && da == db
}

// findImage returns the stored image a reference, ID or digest reference
// names, or nil. r.mu must be held.
func (r *Runtime) findImage(ref string) *imageRecord {
	if ref == "" {
		return nil
	}
	if im := r.store[ref]; im != nil {
		return im
	}
	for _, im := range r.store {
		if im.digest == ref || sameImage(im.name, ref) {
			return im
		}
	}
	return nil
}

// PullImage pulls an image as the behaviour of the pod's container with
// that image says: it takes the pull time (pull slow), and the container's
// first n pulls fail (pull fail n), or all (pull fail always), with the
// gRPC error simruntime reports: code NotFound, "failed to pull and unpack
// image \"<image>\": not found". A pull that succeeds stores the image and
// returns its ID. Containers of one pod that share an image share the
// behaviour of the first of them that has pull clauses.
func (s *ImageService) PullImage(ctx context.Context, req *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, error) {
	r := s.rt
	image := req.GetImage().GetImage()
	if image == "" {
		return nil, status.Error(codes.InvalidArgument, "no image to pull")
	}
	r.mu.Lock()
	var b simruntime.Behaviour
	n := 0
	if pe := r.pods[req.GetSandboxConfig().GetMetadata().GetUid()]; pe != nil {
		var name string
		name, b = pe.pullBehaviour(image)
		if name != "" {
			pe.pulls[name]++
			n = pe.pulls[name]
		}
	}
	start := r.clock.Now()
	r.mu.Unlock()
	if b.PullTime > 0 {
		if err := r.sleep(ctx, b.PullTime, nil); err != nil {
			return nil, err
		}
	}
	if b.PullAlwaysFails || (n > 0 && n <= b.PullFailures) {
		return nil, status.Error(codes.NotFound, "failed to pull and unpack image \""+image+"\": not found")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	im := r.findImage(image)
	if im == nil {
		im = newImageRecord(image, r.opts.ImageSize)
		r.store[im.id] = im
	}
	r.log.V(2).Info("image pulled", "image", image, "id", im.id, "took", r.clock.Since(start))
	return &runtimeapi.PullImageResponse{ImageRef: im.id}, nil
}

// pullBehaviour returns the container whose image a pull is for and its
// behaviour: among the pod's containers with that image, the first with
// pull clauses, else the first.
func (p *podEntry) pullBehaviour(image string) (string, simruntime.Behaviour) {
	if p.pod == nil {
		// Without the spec the image says nothing about the container;
		// only a pod whose one annotated container pulls can be matched.
		if len(p.behaviours) == 1 {
			for name, b := range p.behaviours {
				return name, b
			}
		}
		return "", simruntime.Behaviour{}
	}
	var names []string
	s := &p.pod.Spec
	for i := range s.InitContainers {
		if sameImage(s.InitContainers[i].Image, image) {
			names = append(names, s.InitContainers[i].Name)
		}
	}
	for i := range s.Containers {
		if sameImage(s.Containers[i].Image, image) {
			names = append(names, s.Containers[i].Name)
		}
	}
	for i := range s.EphemeralContainers {
		if sameImage(s.EphemeralContainers[i].Image, image) {
			names = append(names, s.EphemeralContainers[i].Name)
		}
	}
	if len(names) == 0 {
		return "", simruntime.Behaviour{}
	}
	for _, name := range names {
		if b := p.behaviour(name); b.PullAlwaysFails || b.PullFailures > 0 || b.PullTime > 0 {
			return name, b
		}
	}
	return names[0], p.behaviour(names[0])
}

// ImageStatus reports a stored image by reference, ID or digest reference;
// an image the node does not have is a response without an image, as the
// CRI asks.
func (s *ImageService) ImageStatus(ctx context.Context, req *runtimeapi.ImageStatusRequest) (*runtimeapi.ImageStatusResponse, error) {
	r := s.rt
	r.mu.Lock()
	defer r.mu.Unlock()
	if im := r.findImage(req.GetImage().GetImage()); im != nil {
		return &runtimeapi.ImageStatusResponse{Image: im.api()}, nil
	}
	return &runtimeapi.ImageStatusResponse{}, nil
}

// ListImages lists the stored images, or the one the filter names.
func (s *ImageService) ListImages(ctx context.Context, req *runtimeapi.ListImagesRequest) (*runtimeapi.ListImagesResponse, error) {
	return &runtimeapi.ListImagesResponse{Images: s.list(req.GetFilter())}, nil
}

// StreamImages sends what ListImages lists, in one message.
func (s *ImageService) StreamImages(req *runtimeapi.StreamImagesRequest, st grpc.ServerStreamingServer[runtimeapi.StreamImagesResponse]) error {
	return st.Send(&runtimeapi.StreamImagesResponse{Images: s.list(req.GetFilter())})
}

func (s *ImageService) list(f *runtimeapi.ImageFilter) []*runtimeapi.Image {
	r := s.rt
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*runtimeapi.Image
	if ref := f.GetImage().GetImage(); ref != "" {
		if im := r.findImage(ref); im != nil {
			out = append(out, im.api())
		}
		return out
	}
	for _, im := range r.store {
		out = append(out, im.api())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Id < out[j].Id })
	return out
}

// RemoveImage removes a stored image; removing one the node does not have
// succeeds.
func (s *ImageService) RemoveImage(ctx context.Context, req *runtimeapi.RemoveImageRequest) (*runtimeapi.RemoveImageResponse, error) {
	r := s.rt
	r.mu.Lock()
	defer r.mu.Unlock()
	if im := r.findImage(req.GetImage().GetImage()); im != nil {
		delete(r.store, im.id)
	}
	return &runtimeapi.RemoveImageResponse{}, nil
}

// ImageFsInfo reports one image filesystem at Options.ImageFsMountpoint,
// holding the stored images.
func (s *ImageService) ImageFsInfo(ctx context.Context, req *runtimeapi.ImageFsInfoRequest) (*runtimeapi.ImageFsInfoResponse, error) {
	r := s.rt
	r.mu.Lock()
	defer r.mu.Unlock()
	var used uint64
	for _, im := range r.store {
		used += im.size
	}
	return &runtimeapi.ImageFsInfoResponse{ImageFilesystems: []*runtimeapi.FilesystemUsage{{
		Timestamp:  ns(r.clock.Now()),
		FsId:       &runtimeapi.FilesystemIdentifier{Mountpoint: r.opts.ImageFsMountpoint},
		UsedBytes:  &runtimeapi.UInt64Value{Value: used},
		InodesUsed: &runtimeapi.UInt64Value{Value: uint64(len(r.store))},
	}}}, nil
}
