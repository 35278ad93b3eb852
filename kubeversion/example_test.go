package kubeversion_test

import (
	"errors"
	"fmt"

	"github.com/nodestate/nodestate/kubeversion"
)

func ExampleParse() {
	v, err := kubeversion.Parse("v1.34.4")
	fmt.Println(v, v.Release(), err)

	_, err = kubeversion.Parse("1.32")
	fmt.Println(errors.Is(err, kubeversion.ErrUnsupportedVersion))
	fmt.Println(err)
	// Output:
	// 1.34 v1.34.4 <nil>
	// true
	// kubeversion: unsupported Kubernetes version "1.32": supported are 1.33 to 1.37
}

func ExampleSupported() {
	for _, v := range kubeversion.Supported() {
		fmt.Println(v, v.Release())
	}
	// Output:
	// 1.33 v1.33.13
	// 1.34 v1.34.4
	// 1.35 v1.35.4
	// 1.36 v1.36.3
	// 1.37 v1.37.2
}

func ExampleVersion_zero() {
	var v kubeversion.Version // a field nobody set
	fmt.Println(v, v == kubeversion.Default)
	// Output: 1.37 true
}

func ExampleVersion_AtLeast() {
	v := kubeversion.V1_34
	fmt.Println(v.AtLeast(kubeversion.V1_33), v.AtLeast(kubeversion.V1_35))
	// Output: true false
}

func ExampleVersion_Validate() {
	v := kubeversion.Version(99) // an integer converted without Parse
	err := v.Validate()
	fmt.Println(errors.Is(err, kubeversion.ErrUnsupportedVersion))
	fmt.Println(err)
	fmt.Println(kubeversion.V1_34.Validate())
	// Output:
	// true
	// kubeversion: unsupported Kubernetes version kubeversion.Version(99): supported are 1.33 to 1.37
	// <nil>
}
