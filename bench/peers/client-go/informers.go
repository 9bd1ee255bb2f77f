package main

// The two contenders, each built as its framework's docs show: up to the
// point where the informer is started and its HasSynced can be polled.

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	crclient "sigs.k8s.io/controller-runtime/pkg/client"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"
)

// A builder creates and starts an informer for o.resource, with h's
// handlers. main starts the clock just before calling it.
type builder func(ctx context.Context, cfg *rest.Config, o options, h hooks) (cached, error)

// hooks are main's handlers: onEvent for each add and update, onWatchError
// for each failed list or watch (the informer backs off and retries after it).
type hooks struct {
	onEvent      func(obj any)
	onWatchError toolscache.WatchErrorHandlerWithContext
}

// cached is what main needs of a started informer: the framework's synced
// flag, and the objects in its cache once synced.
type cached interface {
	HasSynced() bool
	List(ctx context.Context) ([]any, error)
}

var impls = map[string]builder{
	"client-go":          clientGo,
	"controller-runtime": controllerRuntime,
}

// handler hands adds and updates to onEvent, except the adds of the initial
// list: the informer may still be delivering those just after it has synced.
func (h hooks) handler() toolscache.ResourceEventHandlerDetailedFuncs {
	return toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, isInInitialList bool) {
			if !isInInitialList {
				h.onEvent(obj)
			}
		},
		UpdateFunc: func(_, obj any) { h.onEvent(obj) },
	}
}

// client-go: a clientset and a SharedInformerFactory, no resync.
func clientGo(ctx context.Context, cfg *rest.Config, o options, h hooks) (cached, error) {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	var opts []informers.SharedInformerOption
	if o.namespace != "" {
		opts = append(opts, informers.WithNamespace(o.namespace))
	}
	if o.stripManagedFields {
		opts = append(opts, informers.WithTransform(stripManagedFields))
	}
	if o.labelSelector != "" || o.shardSelect != "" {
		opts = append(opts, informers.WithTweakListOptions(func(lo *metav1.ListOptions) {
			lo.LabelSelector = o.labelSelector
			lo.ShardSelector = o.shardSelect // the shardSelector query parameter (alpha, ShardedListAndWatch)
		}))
	}
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, opts...)
	var informer toolscache.SharedIndexInformer
	if o.resource == "pods" {
		informer = factory.Core().V1().Pods().Informer()
	} else {
		informer = factory.Core().V1().ConfigMaps().Informer()
	}
	if err := informer.SetWatchErrorHandlerWithContext(h.onWatchError); err != nil {
		return nil, err
	}
	if _, err := informer.AddEventHandler(h.handler()); err != nil {
		return nil, err
	}
	factory.Start(ctx.Done())
	return clientGoInformer{informer}, nil
}

type clientGoInformer struct{ toolscache.SharedIndexInformer }

func (i clientGoInformer) List(context.Context) ([]any, error) { return i.GetStore().List(), nil }

// stripManagedFields is the transform client-go leaves to its user (the same
// as controller-runtime's cache.TransformStripManagedFields).
func stripManagedFields(in any) (any, error) {
	if obj, err := meta.Accessor(in); err == nil && obj.GetManagedFields() != nil {
		obj.SetManagedFields(nil)
	}
	return in, nil
}

// controller-runtime: a cache (what a manager builds) and one informer from it.
func controllerRuntime(ctx context.Context, cfg *rest.Config, o options, h hooks) (cached, error) {
	if o.shardSelect != "" {
		unsupported("controller-runtime's cache takes label and field selectors only: it cannot pass a shard selector")
	}
	crlog.SetLogger(logr.Discard()) // else it complains on stderr that no logger was set
	opts := crcache.Options{DefaultWatchErrorHandler: h.onWatchError}
	if o.namespace != "" {
		opts.DefaultNamespaces = map[string]crcache.Config{o.namespace: {}}
	}
	if o.stripManagedFields {
		opts.DefaultTransform = crcache.TransformStripManagedFields()
	}
	if o.labelSelector != "" {
		selector, err := labels.Parse(o.labelSelector)
		if err != nil {
			return nil, err
		}
		opts.DefaultLabelSelector = selector
	}
	c, err := crcache.New(cfg, opts)
	if err != nil {
		return nil, err
	}
	var obj crclient.Object = &corev1.ConfigMap{}
	if o.resource == "pods" {
		obj = &corev1.Pod{}
	}
	informer, err := c.GetInformer(ctx, obj)
	if err != nil {
		return nil, err
	}
	if _, err := informer.AddEventHandler(h.handler()); err != nil {
		return nil, err
	}
	go func() {
		if err := c.Start(ctx); err != nil && ctx.Err() == nil {
			fail(fmt.Errorf("controller-runtime cache: %w", err))
		}
	}()
	return controllerRuntimeInformer{informer, c, o.resource}, nil
}

// The cache's informer (one per namespace behind it when namespaced) for
// HasSynced; the cache itself, read as a client.Reader, for the objects.
type controllerRuntimeInformer struct {
	crcache.Informer
	cache    crcache.Cache
	resource string
}

func (i controllerRuntimeInformer) List(ctx context.Context) ([]any, error) {
	var list crclient.ObjectList = &corev1.ConfigMapList{}
	if i.resource == "pods" {
		list = &corev1.PodList{}
	}
	if err := i.cache.List(ctx, list, crclient.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	objects, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	items := make([]any, len(objects))
	for j, obj := range objects {
		items[j] = obj
	}
	return items, nil
}
