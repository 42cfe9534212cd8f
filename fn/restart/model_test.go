package restart

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	trust = Object{kind: "Secret", name: "trust"}
	other = Object{kind: "ConfigMap", name: "other"}
)

// templateUseCases are pod templates and the uses each makes.
var templateUseCases = []struct {
	name string
	tmpl Template
	want []Use
}{
	{
		name: "nothing read",
		tmpl: Template{Containers: []Container{{mounts: []mount{{volume: "data", field: "m0"}}}}},
		want: nil,
	},
	{
		name: "env valueFrom",
		tmpl: Template{Containers: []Container{{Env: []Ref{{Object: trust, field: "env0"}}}}},
		want: []Use{{Object: trust, Via: ViaEnv, Field: "env0"}},
	},
	{
		name: "envFrom",
		tmpl: Template{Containers: []Container{{EnvFrom: []Ref{{Object: other, field: "envFrom0"}}}}},
		want: []Use{{Object: other, Via: ViaEnvFrom, Field: "envFrom0"}},
	},
	{
		name: "whole volume mount",
		tmpl: Template{
			Volumes:    []Volume{{Name: "ca", Sources: []Ref{{Object: trust, field: "vol0"}}}},
			Containers: []Container{{mounts: []mount{{volume: "ca", field: "m0"}}}},
		},
		want: []Use{{Object: trust, Via: ViaVolume, Field: "m0"}},
	},
	{
		name: "subPath mount",
		tmpl: Template{
			Volumes:    []Volume{{Name: "ca", Sources: []Ref{{Object: trust, field: "vol0"}}}},
			Containers: []Container{{mounts: []mount{{volume: "ca", subPath: true, field: "m0.subPath"}}}},
		},
		want: []Use{{Object: trust, Via: ViaSubPath, Field: "m0.subPath"}},
	},
	{
		name: "one volume mounted whole by one container and by subPath in another",
		tmpl: Template{
			Volumes: []Volume{{Name: "ca", Sources: []Ref{{Object: trust, field: "vol0"}}}},
			Containers: []Container{
				{mounts: []mount{{volume: "ca", field: "c0.m0"}}},
				{mounts: []mount{{volume: "ca", subPath: true, field: "c1.m0.subPath"}}},
			},
		},
		want: []Use{
			{Object: trust, Via: ViaVolume, Field: "c0.m0"},
			{Object: trust, Via: ViaSubPath, Field: "c1.m0.subPath"},
		},
	},
	{
		name: "projected volume with two sources",
		tmpl: Template{
			Volumes: []Volume{{Name: "bundle", Sources: []Ref{
				{Object: trust, field: "vol0.src0"},
				{Object: other, field: "vol0.src1"},
			}}},
			Containers: []Container{{mounts: []mount{{volume: "bundle", field: "m0"}}}},
		},
		want: []Use{
			{Object: trust, Via: ViaVolume, Field: "m0"},
			{Object: other, Via: ViaVolume, Field: "m0"},
		},
	},
	{
		name: "volume no container mounts still counts as a whole-volume use",
		tmpl: Template{Volumes: []Volume{{Name: "ca", Sources: []Ref{{Object: trust, field: "vol0.secret"}}}}},
		want: []Use{{Object: trust, Via: ViaVolume, Field: "vol0.secret"}},
	},
	{
		name: "mount of another volume does not count",
		tmpl: Template{
			Volumes:    []Volume{{Name: "ca", Sources: []Ref{{Object: trust, field: "vol0"}}}},
			Containers: []Container{{mounts: []mount{{volume: "ca", field: "m0"}, {volume: "tmp", subPath: true, field: "m1.subPath"}}}},
		},
		want: []Use{{Object: trust, Via: ViaVolume, Field: "m0"}},
	},
}

func TestTemplateUses(t *testing.T) {
	for _, tc := range templateUseCases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.tmpl.uses())
		})
	}
}

func TestGroupByObject(t *testing.T) {
	uses := []Use{
		{Object: trust, Via: ViaEnv, Field: "a"},
		{Object: other, Via: ViaVolume, Field: "b"},
		{Object: trust, Via: ViaSubPath, Field: "c"},
	}
	got := groupByObject(uses)
	require.Len(t, got, 2)
	assert.Equal(t, []Use{uses[0], uses[2]}, got[trust])
	assert.Equal(t, []Use{uses[1]}, got[other])
}

func TestViaFixedAtStart(t *testing.T) {
	assert.False(t, ViaVolume.fixedAtStart(), "a whole-volume mount is updated in place")
	for _, v := range []Via{ViaSubPath, ViaEnv, ViaEnvFrom} {
		assert.True(t, v.fixedAtStart(), v.String())
	}
}

func TestParseReload(t *testing.T) {
	cases := []struct {
		value   string
		set     bool
		want    reload
		wantErr string
	}{
		{value: "", set: false, want: reloadDefault},
		{value: "hot", set: true, want: reloadHot},
		{value: "never", set: true, want: reloadNever},
		{value: "Hot", set: true, wantErr: `"Hot" is not a reload class`},
		{value: "", set: true, wantErr: `"" is not a reload class`},
		{value: "sometimes", set: true, wantErr: `use "hot"`},
	}
	for _, tc := range cases {
		got, err := parseReload(tc.value, tc.set)
		if tc.wantErr != "" {
			require.ErrorContains(t, err, tc.wantErr)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, tc.value)
	}
}

func TestDecide(t *testing.T) {
	env := Use{Object: trust, Via: ViaEnv, Field: "env"}
	envFrom := Use{Object: trust, Via: ViaEnvFrom, Field: "envFrom"}
	sub := Use{Object: trust, Via: ViaSubPath, Field: "sub"}
	vol := Use{Object: trust, Via: ViaVolume, Field: "vol"}
	cases := []struct {
		name     string
		uses     []Use
		reload   reload
		explicit bool
		roll     bool
		because  string
	}{
		{"env rolls", []Use{env}, reloadDefault, false, true, "env"},
		{"envFrom rolls", []Use{envFrom}, reloadDefault, false, true, "envFrom"},
		{"subPath rolls", []Use{sub}, reloadDefault, false, true, "sub"},
		{"volume rolls by default", []Use{vol}, reloadDefault, false, true, "vol"},
		{"hot volume does not roll", []Use{vol}, reloadHot, false, false, "vol"},
		{"hot env still rolls", []Use{env}, reloadHot, false, true, "env"},
		{"hot subPath still rolls", []Use{sub}, reloadHot, false, true, "sub"},
		{"hot volume plus subPath rolls for the subPath", []Use{vol, sub}, reloadHot, false, true, "sub"},
		{"never with env does not roll", []Use{env}, reloadNever, false, false, "env"},
		{"never wins over explicit", nil, reloadNever, true, false, ""},
		{"explicit without uses rolls", nil, reloadDefault, true, true, ""},
		{"explicit hot volume rolls", []Use{vol}, reloadHot, true, true, "vol"},
		{"no uses, not explicit", nil, reloadDefault, false, false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := decide(tc.uses, tc.reload, tc.explicit)
			assert.Equal(t, tc.roll, d.Roll)
			assert.Equal(t, tc.because, d.Because.Field)
			assert.NotEmpty(t, d.Reason)
		})
	}
}

func TestTrustHash(t *testing.T) {
	a := bundleHash{Bundle: "a", Hash: "sha256:01"}
	b := bundleHash{Bundle: "b", Hash: "sha256:02"}
	b2 := bundleHash{Bundle: "b", Hash: "sha256:03"}

	ab := trustHash([]bundleHash{a, b})
	assert.Regexp(t, `^sha256:[0-9a-f]{64}$`, ab)
	assert.Equal(t, ab, trustHash([]bundleHash{b, a}), "order of discovery must not matter")
	assert.NotEqual(t, ab, trustHash([]bundleHash{a, b2}), "a changed bundle must change the hash")
	assert.NotEqual(t, ab, trustHash([]bundleHash{a}), "dropping a bundle must change the hash")
	assert.NotEqual(t, trustHash([]bundleHash{{Bundle: "a", Hash: "sha256:02"}, {Bundle: "b", Hash: "sha256:01"}}), ab,
		"swapping hashes between bundles must change the hash")
	assert.Equal(t, trustHash([]bundleHash{a}), trustHash([]bundleHash{a}))
}
