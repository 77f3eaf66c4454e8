package scheme

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	kubeschedulerscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	kubeschedulerv1 "k8s.io/kubernetes/pkg/scheduler/apis/config/v1"

	"github.com/vmafx/vmafx/scheduler-plugin/apis/config"
	configv1 "github.com/vmafx/vmafx/scheduler-plugin/apis/config/v1"
)

// kube-scheduler decodes a config file with kubeschedulerscheme.Scheme, but defaults and
// converts typed plugin args with a second scheme of its own (the plugin-arg conversion
// scheme); our args must be known to both, or a file's args would decode and then fail to
// convert.
func init() {
	for _, s := range []*runtime.Scheme{kubeschedulerscheme.Scheme, kubeschedulerv1.GetPluginArgConversionScheme()} {
		utilruntime.Must(config.AddToScheme(s))
		utilruntime.Must(configv1.AddToScheme(s))
	}
}
